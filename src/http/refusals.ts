import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditEntry } from '../audit/audit-log.ts';
import { declaredClient } from '../mcp/client-session.ts';

/**
 * Every answer the HTTP layer gives instead of serving a request, declared once. Two body shapes:
 * the gateway's own `{code, message}` (every route, and the MCP route's door: Host/Origin, auth,
 * limits), and a JSON-RPC error with `id: null` (failures on the MCP route once the body is read,
 * where clients parse nothing else). Contract errors of a read are not here: `read/errors.ts`.
 */
export type RefusalName = keyof typeof REFUSALS;

type Headers = Readonly<Record<string, string>>;

interface GatewayRefusal {
  readonly status: number;
  readonly shape: 'gateway';
  readonly code: string;
  /** The fixed text; absent where the refusal always says why (the caller passes it). */
  readonly message?: string;
  readonly headers?: Headers;
}

interface JsonRpcRefusal {
  readonly status: number;
  readonly shape: 'json-rpc';
  readonly rpcCode: number;
  readonly message?: string;
  readonly headers?: Headers;
}

type Refusal = GatewayRefusal | JsonRpcRefusal;

/** JSON-RPC 2.0 error codes (§5.1) and the MCP SDK's transport-level server error. */
export const RPC_ERROR = {
  parse: -32700,
  invalidRequest: -32600,
  internal: -32603,
  server: -32000,
} as const;

const gateway = (status: number, code: string, message?: string, headers?: Headers): GatewayRefusal => ({
  status,
  shape: 'gateway',
  code,
  ...(message === undefined ? {} : { message }),
  ...(headers === undefined ? {} : { headers }),
});

const jsonRpc = (status: number, rpcCode: number, message?: string, headers?: Headers): JsonRpcRefusal => ({
  status,
  shape: 'json-rpc',
  rpcCode,
  ...(message === undefined ? {} : { message }),
  ...(headers === undefined ? {} : { headers }),
});

export const REFUSALS = {
  // Every route, before anything else runs (DNS rebinding, cross-site requests).
  invalid_host: gateway(403, 'invalid_host', 'The Host header names a host this gateway does not serve.'),
  invalid_origin: gateway(403, 'invalid_origin', 'Requests from this Origin are not allowed.'),
  // The MCP route's door: the message names the authentication failure; 401 carries the challenge.
  unauthenticated: gateway(401, 'unauthenticated'),
  invalid_api_key_surface: gateway(403, 'invalid_api_key_surface'),
  // A valid credential that may not do this: a token without a required scope (step-up challenge).
  unauthorized: gateway(403, 'unauthorized'),
  // `retry-after` is set per refusal: the seconds until a slot or the rate window frees.
  rate_limited: gateway(429, 'rate_limited'),
  not_found: gateway(404, 'not_found', 'Not found.'),
  // Fastify's own failures off the MCP route; the status is the error's.
  bad_request: gateway(400, 'bad_request', 'Bad request.'),
  internal_error: gateway(500, 'internal_error', 'Internal error.'),
  // Time bounds (src/http/time-bounds.ts): the connection is closed after each of these.
  request_incomplete: gateway(408, 'request_incomplete', 'The request did not arrive in time.'),
  request_timeout: gateway(503, 'request_timeout', 'The request took too long to serve.'),
  headers_too_large: gateway(431, 'headers_too_large', 'The request headers are too large.'),
  // The MCP route: no streams and no sessions, so only POST.
  method_not_allowed: jsonRpc(405, RPC_ERROR.server, 'Method not allowed: use POST.', { allow: 'POST' }),
  // RFC 7694: the answer names the coding that is accepted.
  unsupported_encoding: jsonRpc(415, RPC_ERROR.server, undefined, { 'accept-encoding': 'identity' }),
  parse_error: jsonRpc(400, RPC_ERROR.parse),
  invalid_request: jsonRpc(400, RPC_ERROR.invalidRequest),
  // Fastify's own failures on the MCP route (body too large, …); the status is the error's.
  rpc_bad_request: jsonRpc(400, RPC_ERROR.server, 'Bad request.'),
  rpc_internal_error: jsonRpc(500, RPC_ERROR.internal, 'Internal error.'),
} as const satisfies Record<string, Refusal>;

export interface RefusalDetails {
  /** Replaces the declared text (or supplies it where none is declared). */
  message?: string;
  /** Replaces the declared status where the failure carries its own (Fastify errors). */
  status?: number;
  /** Added to the declared headers (a challenge, `retry-after`). */
  headers?: Headers;
}

/** The JSON-RPC error object with `id: null`, as the HTTP layer answers a message it cannot serve. */
export const jsonRpcError = (rpcCode: number, message: string, id: unknown = null) => ({
  jsonrpc: '2.0' as const,
  error: { code: rpcCode, message },
  id,
});

/** The body of a refusal: `{code, message}` or a JSON-RPC error. */
export function refusalBody(name: RefusalName, message?: string): Record<string, unknown> {
  const refusal: Refusal = REFUSALS[name];
  const text = message ?? refusal.message ?? '';
  return refusal.shape === 'gateway'
    ? { code: refusal.code, message: text }
    : jsonRpcError(refusal.rpcCode, text);
}

/** Answers the request with a declared refusal. */
export function refuse(reply: FastifyReply, name: RefusalName, details: RefusalDetails = {}): FastifyReply {
  const refusal: Refusal = REFUSALS[name];
  reply.code(details.status ?? refusal.status);
  if (refusal.headers) reply.headers(refusal.headers);
  if (details.headers) reply.headers(details.headers);
  return reply.send(refusalBody(name, details.message));
}

/**
 * A refusal as raw HTTP/1.1 text, for a socket with no request object to answer through (Node's
 * `clientError`: headers too large or too slow, a body too slow). It always closes the connection.
 */
export function rawRefusal(name: RefusalName, details: RefusalDetails = {}): string {
  const refusal: Refusal = REFUSALS[name];
  const status = details.status ?? refusal.status;
  const body = JSON.stringify(refusalBody(name, details.message));
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    ...refusal.headers,
    ...details.headers,
  };
  const lines = Object.entries(headers).map(([header, value]) => `${header}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}

/** Answers a raw response (a hijacked reply) with a declared refusal, and closes its connection. */
export function refuseRaw(response: ServerResponse, name: RefusalName, details: RefusalDetails = {}): void {
  const refusal: Refusal = REFUSALS[name];
  const body = JSON.stringify(refusalBody(name, details.message));
  response.shouldKeepAlive = false;
  response.writeHead(details.status ?? refusal.status, {
    'content-type': 'application/json; charset=utf-8',
    ...refusal.headers,
    ...details.headers,
  });
  response.end(body);
}

/** What a refusal's audit record adds to the request's own facts. */
export type RefusalFacts = Partial<AuditEntry> & { outcome: string; httpStatus: number };

/** The audit log's side the HTTP layer uses. */
export interface RefusalAudit {
  record(entry: AuditEntry): void;
}

/** One `mcp.request_denied` record for a refused request: who, what and why, never a credential. */
export function auditRefusal(
  audit: RefusalAudit | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  facts: RefusalFacts,
): void {
  audit?.record({
    event: 'mcp.request_denied',
    requestId: String(request.id),
    // A refused request's body is never read: its session id and User-Agent say who sent it.
    ...declaredClient(undefined, request.headers),
    httpMethod: request.method,
    path: request.url.split('?', 1)[0],
    durationMs: reply.elapsedTime,
    ...facts,
  });
}
