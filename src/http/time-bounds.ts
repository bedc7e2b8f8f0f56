import type { IncomingMessage, Server } from 'node:http';
import {
  type Http2ServerRequest,
  type Http2Session,
  constants as http2,
  type ServerHttp2Stream,
} from 'node:http2';
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
 *
 * HTTP/2 (native TLS) keeps the same bounds per stream: a stream's headers arrive whole, so its whole
 * request must arrive within `headersTimeoutMs + bodyTimeoutMs` of them, else 408
 * `request_incomplete`; serving is bounded as above. Where HTTP/1.1 closes the connection, HTTP/2
 * closes the stream (RST_STREAM NO_ERROR, RFC 9113 §8.1, once the answer is sent): the session and
 * its other streams go on, and no stream the client left open is kept. A session that opens no
 * stream within `headersTimeoutMs` is closed (GOAWAY), as a silent HTTP/1.1 socket is; an idle one
 * after Fastify's `http2SessionTimeout` (72 s). The TLS handshake is bounded by `headersTimeoutMs`
 * too (`src/http/tls.ts`).
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

/** Sockets already answered by the `clientError` handler: their later errors are not new refusals. */
const refusedSockets = new WeakSet<Duplex>();

/** The HTTP/2 stream under a request, or undefined for HTTP/1.1. */
const http2Stream = (request: FastifyRequest): ServerHttp2Stream | undefined =>
  request.raw.httpVersionMajor === 2 ? (request.raw as unknown as Http2ServerRequest).stream : undefined;

/** Whether the client has sent all of the stream's request (END_STREAM), read or not, or it is closed. */
const arrived = (stream: ServerHttp2Stream): boolean =>
  stream.closed || stream.destroyed || stream.state.remoteClose === 1;

/** The bounds Node's servers keep on connections, sessions and handshakes, and its client errors answered. */
function boundConnections(
  server: Server & { connectionsCheckingInterval?: number },
  options: TimeBoundsOptions,
): void {
  // HTTP/1.1 servers, plain and TLS, and HTTP/2's HTTP/1.1 fallback (`allowHTTP1`); HTTP/2 streams below.
  if ('headersTimeout' in server) {
    server.headersTimeout = options.headersTimeoutMs;
    server.requestTimeout = options.headersTimeoutMs + options.bodyTimeoutMs;
    server.connectionsCheckingInterval = Math.max(
      25,
      Math.min(1000, Math.floor(Math.min(options.headersTimeoutMs, options.bodyTimeoutMs) / 4)),
    );
  }

  // A TLS handshake that fails or misses its bound (`src/http/tls.ts`) is no HTTP request: nothing
  // can be answered before the handshake, and nothing is audited. Node's HTTP/2 server would pass it
  // to `clientError`, answered below as malformed HTTP in plain text on a TLS socket.
  server.removeAllListeners('tlsClientError');
  server.on('tlsClientError', (_error: Error, socket: Duplex) => socket.destroy());

  // Replaces Fastify's own answer (`{"error":…,"statusCode":…}`) with the gateway's.
  server.removeAllListeners('clientError');
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ParsedSocket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // A client that hangs up after its 408 leaves the parser mid-request (HPE_INVALID_EOF_STATE):
    // that socket was refused once, and is audited once.
    if (refusedSockets.has(socket)) return void socket.destroy();
    refusedSockets.add(socket);
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

  // HTTP/2: a session that opens no stream within the headers bound is closed, as a silent socket is.
  server.on('session', (session: Http2Session) => {
    const silent = setTimeout(() => session.close(), options.headersTimeoutMs);
    silent.unref();
    session.once('stream', () => clearTimeout(silent));
    session.once('close', () => clearTimeout(silent));
  });
}

async function timeBounds(app: FastifyInstance, options: TimeBoundsOptions): Promise<void> {
  // `connectionsCheckingInterval` is read when the server starts listening; @types/node omits it.
  boundConnections(app.server as Server & { connectionsCheckingInterval?: number }, options);

  const wholeRequestMs = options.headersTimeoutMs + options.bodyTimeoutMs;
  // Callback hooks, here and below: an async hook costs a promise and Fastify's continuation per request.
  app.addHook('onRequest', (request, reply, done) => {
    const timer = setTimeout(() => expire(request, reply), options.requestTimeoutMs);
    timer.unref();
    // HTTP/1.1's whole-request bound is Node's `requestTimeout`; an HTTP/2 stream has its own here.
    const stream = http2Stream(request);
    const incomplete =
      stream === undefined
        ? undefined
        : setTimeout(() => arrivedLate(request, reply, stream), wholeRequestMs);
    incomplete?.unref();
    const answered = () => {
      clearTimeout(timer);
      clearTimeout(incomplete);
    };
    reply.raw.once('close', answered);
    // An HTTP/2 response closes with its stream, which a client may keep open after the answer.
    stream?.once('finish', answered);
    done();
  });

  function arrivedLate(request: FastifyRequest, reply: FastifyReply, stream: ServerHttp2Stream): void {
    if (!arrived(stream)) missed(request, reply, 'request_incomplete', 'body_timeout');
  }

  function expire(request: FastifyRequest, reply: FastifyReply): void {
    missed(request, reply, 'request_timeout', 'request_timeout');
  }

  /** A missed bound: counted, audited, and answered with its refusal or cut short. */
  function missed(
    request: FastifyRequest,
    reply: FastifyReply,
    name: 'request_incomplete' | 'request_timeout',
    reason: 'body_timeout' | 'request_timeout',
  ): void {
    options.metrics.refused(reason);
    auditRefusal(options.audit, request, reply, { outcome: name, reason, httpStatus: REFUSALS[name].status });
    cutShort(request, reply, name);
  }

  // A refusal before the body was read: the connection closes after it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !request.raw.complete) closeAfter(request, reply);
    done(null, payload);
  });
}

/** Answers a missed bound with its refusal, or cuts the connection (stream) if an answer has begun. */
function cutShort(
  request: FastifyRequest,
  reply: FastifyReply,
  name: 'request_incomplete' | 'request_timeout',
): void {
  if (reply.raw.headersSent) {
    const stream = http2Stream(request);
    if (stream === undefined) request.raw.socket.destroy();
    else stream.close(http2.NGHTTP2_CANCEL);
  } else if (reply.sent) {
    // Hijacked (the MCP SDK's path): answered on the raw response.
    refuseRaw(reply.raw, name);
    closeAfter(request, reply);
  } else {
    closeAfter(request, reply);
    void refuse(reply, name);
  }
}

/**
 * The connection closes once this answer is sent (HTTP/1.1); an HTTP/2 stream whose request the
 * client has not finished is reset with NO_ERROR once the answer is sent (RFC 9113 §8.1: the answer
 * stands, send no more), so that neither side keeps it open.
 */
function closeAfter(request: FastifyRequest, reply: FastifyReply): void {
  const stream = http2Stream(request);
  if (stream === undefined) {
    reply.raw.shouldKeepAlive = false;
    return;
  }
  // The stream's own `finish`: the answer is sent in full (the compatibility response's `finish` comes
  // only with the stream's close).
  stream.once('finish', () => {
    if (!arrived(stream)) stream.close(http2.NGHTTP2_NO_ERROR);
  });
}

export const timeBoundsPlugin = fp(timeBounds, { name: 'dagu-mcp-time-bounds', fastify: '5.x' });
