import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RefusalReason } from '../core/refusal-reasons.ts';
import {
  auditRefusal,
  REFUSALS,
  type RefusalAudit,
  type RefusalName,
  rawRefusal,
  refuse,
  refuseRaw,
} from './refusals.ts';

/**
 * Time bounds on every request, so that no client holds a socket (or a handler) for ever:
 * - headers: the request headers arrive within `headersTimeoutMs` (Node's `headersTimeout`), from
 *   the connection, or from the first byte of a later request on a kept-alive connection (an idle
 *   kept-alive connection is closed after Fastify's `keepAliveTimeout`, 72 s);
 * - body: the whole request arrives within `headersTimeoutMs + bodyTimeoutMs` (Node's `requestTimeout`);
 * - serving: the answer is sent within `requestTimeoutMs` of the request's headers (a timer here).
 * Node checks the first two every `connectionsCheckingInterval`, which this plugin sets to a quarter
 * of the shorter bound (at most 1 s) so a bound is kept to within that. Missed bounds are answered
 * in the gateway's shape where no answer has started (408 `request_incomplete`, 503
 * `request_timeout`), the connection is closed, and each is audited and counted
 * (`mcp_gateway_refused_requests_total{reason}`). Node's other client errors are answered here too:
 * headers too large (431 `headers_too_large`) and malformed HTTP (400 `bad_request`).
 *
 * A refusal sent before the request body was read closes the connection: otherwise a client that
 * trickles a body after its 401 would keep the socket until the body bound.
 */
export interface TimeBoundsOptions {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  requestTimeoutMs: number;
  metrics: { refused(reason: RefusalReason): void };
  audit: RefusalAudit;
}

/** Node's HTTP parser as it hangs on a socket: `incoming` is set once the headers are in. */
interface ParsedSocket extends Duplex {
  parser?: { incoming?: IncomingMessage | null } | null;
  _httpMessage?: { headersSent?: boolean } | null;
}

/** What Node's `clientError` carries, mapped to a refusal and a reason. */
function classify(error: NodeJS.ErrnoException, socket: ParsedSocket): [RefusalName, RefusalReason] {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const incoming = socket.parser?.incoming;
    return ['request_incomplete', incoming && !incoming.complete ? 'body_timeout' : 'headers_timeout'];
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return ['headers_too_large', 'headers_too_large'];
  return ['bad_request', 'bad_http'];
}

let clientErrors = 0;

async function timeBounds(app: FastifyInstance, options: TimeBoundsOptions): Promise<void> {
  // `connectionsCheckingInterval` is read when the server starts listening; @types/node omits it.
  const server = app.server as Server & { connectionsCheckingInterval?: number };
  // HTTP/1.1 servers (plain and TLS); an HTTP/2 server keeps its own session timeout.
  if ('headersTimeout' in server) {
    server.headersTimeout = options.headersTimeoutMs;
    server.requestTimeout = options.headersTimeoutMs + options.bodyTimeoutMs;
    server.connectionsCheckingInterval = Math.max(
      25,
      Math.min(1000, Math.floor(Math.min(options.headersTimeoutMs, options.bodyTimeoutMs) / 4)),
    );
  }

  // Replaces Fastify's own answer (`{"error":…,"statusCode":…}`) with the gateway's.
  server.removeAllListeners('clientError');
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ParsedSocket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [name, reason] = classify(error, socket);
    const incoming = socket.parser?.incoming ?? undefined;
    options.metrics.refused(reason);
    options.audit.record({
      event: 'mcp.request_denied',
      requestId: `client-error-${++clientErrors}`,
      outcome: name,
      reason,
      httpStatus: REFUSALS[name].status,
      ...(incoming?.method ? { httpMethod: incoming.method } : {}),
      ...(incoming?.url ? { path: incoming.url.split('?', 1)[0] } : {}),
      durationMs: 0,
    });
    if (socket.writable && socket._httpMessage?.headersSent !== true) socket.end(rawRefusal(name));
    // A client that does not read the answer does not keep the socket either.
    setTimeout(() => socket.destroy(), 1000).unref();
  });

  app.addHook('onRequest', async (request, reply) => {
    const timer = setTimeout(() => expire(request, reply), options.requestTimeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  });

  function expire(request: FastifyRequest, reply: FastifyReply): void {
    options.metrics.refused('request_timeout');
    auditRefusal(options.audit, request, reply, {
      outcome: 'request_timeout',
      reason: 'request_timeout',
      httpStatus: 503,
    });
    if (reply.raw.headersSent) {
      request.raw.socket.destroy();
    } else if (reply.sent) {
      // Hijacked (the MCP SDK's path): answered on the raw response.
      refuseRaw(reply.raw, 'request_timeout');
    } else {
      closeAfter(request, reply);
      void refuse(reply, 'request_timeout');
    }
  }

  // A refusal before the body was read: the connection closes after it.
  app.addHook('onSend', async (request, reply) => {
    if (reply.statusCode >= 400 && !request.raw.complete) closeAfter(request, reply);
  });
}

/** The connection closes once this answer is sent (HTTP/1.1; an HTTP/2 stream ends on its own). */
function closeAfter(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.httpVersionMajor === 1) reply.raw.shouldKeepAlive = false;
}

export const timeBoundsPlugin = fp(timeBounds, { name: 'dagu-mcp-time-bounds', fastify: '5.x' });
