import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

const pathOf = (request: FastifyRequest) => request.url.split('?', 1)[0] ?? '';

/**
 * CORS for the MCP endpoint and its discovery documents, through `@fastify/cors`, for exactly the
 * origins the Host/Origin check admits (`originMatcher`, loopback rule included, so the two cannot
 * disagree). Registered after the Host/Origin check: a disallowed Origin has already had its 403 and
 * gets no CORS headers. Registered before authentication: a preflight (which carries no credential)
 * is answered 204 here, and the headers set here stay on every later refusal (401, 403, 429), so a
 * browser can read why. Other routes (health, metrics) and requests without an Origin get none.
 */
async function cors(app: FastifyInstance, options: CorsOptions): Promise<void> {
  const admitted = originMatcher(options.allowedOrigins, { loopback: options.loopbackOrigins === true });
  const mcp = options.mcpPath;
  const discovery = new Set([resourceMetadataPath(mcp), RESOURCE_METADATA_PREFIX]);
  const common = {
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
    // Bearer credentials travel in `Authorization`, set by the client: no cookies, no credentials mode.
    credentials: false,
  } satisfies FastifyCorsOptions;
  const off: FastifyCorsOptions = { origin: false };

  await app.register(fastifyCors, {
    // Per request: which route, and whether the Origin is admitted. `origin: false` adds nothing, and an
    // OPTIONS request left unanswered here falls through to the not-found answer, as before.
    delegator: (request, done) => {
      const path = pathOf(request);
      const methods =
        path === mcp ? CORS_MCP_METHODS : discovery.has(path) ? CORS_DISCOVERY_METHODS : undefined;
      const origin = request.headers.origin;
      // An OPTIONS request that is not a preflight is not answered as one (no 400 of the plugin's own).
      const notPreflight =
        request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined;
      if (methods === undefined || origin === undefined || notPreflight || !admitted(origin)) {
        done(null, off);
        return;
      }
      done(null, { ...common, origin: true, methods: [...methods] });
    },
  });
}

export const corsPlugin = fp(cors, { name: 'dagu-mcp-cors', fastify: '5.x' });
