import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { RESOURCE_METADATA_PREFIX, resourceMetadataPath } from './protected-resource.ts';
import { originMatcher } from './security.ts';

export interface CorsOptions {
  /** The MCP endpoint path; it and its protected-resource metadata documents answer browsers. */
  mcpPath: string;
  /** The same lists as the Host/Origin check (`ALLOWED_ORIGINS`, the loopback rule): one matcher. */
  allowedOrigins: readonly string[];
  loopbackOrigins?: boolean;
}

/** The methods of the Streamable HTTP transport: POST messages, GET a stream, DELETE a session. */
export const CORS_MCP_METHODS = ['GET', 'POST', 'DELETE'] as const;
/** The discovery documents are read with GET only. */
export const CORS_DISCOVERY_METHODS = ['GET'] as const;

/** The request headers MCP clients send (both protocol eras, auth, stream resumption). */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
] as const;

/**
 * The response headers a browser client must read: the session and revision, the auth challenge (to
 * start OAuth or show why a key was refused) and `retry-after` (to back off after a 429).
 */
export const CORS_EXPOSED_HEADERS = [
  'mcp-session-id',
  'mcp-protocol-version',
  'www-authenticate',
  'retry-after',
] as const;

/**
 * How long a browser may reuse a preflight answer, in seconds: Chromium's cap (two hours). Safe to
 * keep long: every actual request is still checked (Origin, then credentials) when it arrives.
 */
export const CORS_MAX_AGE_SECONDS = 7200;

const pathOf = (request: FastifyRequest) => {
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
};

/** Adds `Origin` to the response's `Vary` (an answer depends on it even when it carries no CORS header). */
function varyOnOrigin(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) {
    reply.header('vary', 'Origin');
    return;
  }
  const text = Array.isArray(vary) ? vary.join(', ') : String(vary);
  const names = text.split(',').map((name) => name.trim().toLowerCase());
  if (!names.includes('*') && !names.includes('origin')) reply.header('vary', `${text}, Origin`);
}

/**
 * CORS for the MCP endpoint and its discovery documents, for exactly the origins the Host/Origin check
 * admits (`originMatcher`, loopback rule included, so the two cannot disagree). Registered after the
 * Host/Origin check: a disallowed Origin has already had its 403 and gets no CORS headers. Registered
 * before authentication: a preflight (which carries no credential) is answered 204 here, and the
 * headers set here stay on every later refusal (401, 403, 429), so a browser can read why. Other routes
 * (health, metrics) and requests without an Origin get none, only `Vary: Origin`.
 * The headers are those `@fastify/cors` wrote for these options (reflected origin, no credentials);
 * written here, a request without an Origin (every non-browser client) costs one header, where the
 * plugin normalised its options twice per request.
 */
async function cors(app: FastifyInstance, options: CorsOptions): Promise<void> {
  const admitted = originMatcher(options.allowedOrigins, { loopback: options.loopbackOrigins === true });
  const mcp = options.mcpPath;
  const discovery = new Set([resourceMetadataPath(mcp), RESOURCE_METADATA_PREFIX]);
  const exposed = CORS_EXPOSED_HEADERS.join(', ');
  const preflightHeaders = (methods: readonly string[]) => ({
    'access-control-allow-methods': methods.join(', '),
    'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
  });
  const mcpPreflight = preflightHeaders(CORS_MCP_METHODS);
  const discoveryPreflight = preflightHeaders(CORS_DISCOVERY_METHODS);

  app.addHook('onRequest', (request, reply, done) => {
    varyOnOrigin(reply);
    const origin = request.headers.origin;
    if (origin === undefined) return done();
    const path = pathOf(request);
    const preflight = path === mcp ? mcpPreflight : discovery.has(path) ? discoveryPreflight : undefined;
    // An OPTIONS request that is not a preflight is not answered as one: it falls through to not-found.
    const isOptions = request.raw.method === 'OPTIONS';
    if (isOptions && request.headers['access-control-request-method'] === undefined) return done();
    if (preflight === undefined || !admitted(origin)) return done();
    // Bearer credentials travel in `Authorization`, set by the client: no cookies, no credentials mode.
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-expose-headers', exposed);
    if (!isOptions) return done();
    // Safari (and others) wait for a body on a 204 without a length.
    reply.headers(preflight).code(204).header('content-length', '0').send();
  });
  // An OPTIONS request this hook did not answer (no preflight, another route or origin) is not found.
  app.options('*', (_request, reply) => {
    reply.callNotFound();
  });
}

export const corsPlugin = fp(cors, { name: 'dagu-mcp-cors', fastify: '5.x' });
