import { randomUUID } from 'node:crypto';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { McpRequestFacts } from '../mcp/request-context.ts';
import { requestFacts } from '../mcp/request-context.ts';
import type { AccessPolicy } from '../read/types.ts';

const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';

/** Who is calling, as established by the auth hooks that run before this route. */
export interface Caller {
  identity: string;
  identityKind: McpRequestFacts['identityKind'];
  role: string;
  access: AccessPolicy;
}

export interface McpRouteOptions {
  path: string;
  /** The web-standard handler from createMcpEndpoint. */
  handler: Parameters<typeof toNodeHandler>[0];
  bodyLimitBytes: number;
  callDeadlineMs: number;
  caller(request: FastifyRequest): Caller;
  /** Route-level hooks (auth) that must run before the body is parsed. */
  onRequest?: onRequestHookHandler[];
  /** Hooks that need the parsed body (rate limits count tool calls only). */
  preHandler?: preHandlerHookHandler[];
}

type JsonObject = Record<string, unknown>;

const asObject = (value: unknown): JsonObject | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;

/** A plain object the SDK will pass through unchanged (it drops an own `__proto__` key). */
const isPassThroughObject = (value: unknown): boolean =>
  asObject(value) !== undefined && !Object.hasOwn(value as object, '__proto__');

/**
 * Keeps the caller's raw `tools/call` arguments out of band and hands the SDK an object it accepts, so
 * a string, array, null or `__proto__`-carrying argument still reaches our validator and gets the
 * contract's error object rather than a JSON-RPC protocol error (design §1b, sdk-notes §4).
 */
export function liftArguments(body: unknown): { body: unknown; raw?: { value: unknown } } {
  const message = asObject(body);
  const params = asObject(message?.params);
  if (message?.method !== 'tools/call' || params === undefined) return { body };
  const raw = { value: params.arguments };
  if (!('arguments' in params) || isPassThroughObject(params.arguments)) return { body, raw };
  return { body: { ...message, params: { ...params, arguments: {} } }, raw };
}

/** Client name/version: from `initialize` (legacy era) or the per-request envelope (2026-07-28). */
function clientInfo(body: unknown): { name: string | undefined; version: string | undefined } {
  const params = asObject(asObject(body)?.params);
  const info = asObject(params?.clientInfo) ?? asObject(asObject(params?._meta)?.[CLIENT_INFO_KEY]);
  const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 128) : undefined);
  return { name: text(info?.name), version: text(info?.version) };
}

const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
  reply
    .code(405)
    .header('allow', 'POST')
    .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: use POST.' }, id: null });

/** Mounts the MCP endpoint: POST serves JSON-RPC; GET and DELETE answer 405 (no streams, no sessions). */
export async function mcpRoute(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  const nodeHandler = toNodeHandler(options.handler, { maxRequestBodySize: options.bodyLimitBytes });

  app.route({
    method: 'POST',
    url: options.path,
    bodyLimit: options.bodyLimitBytes,
    onRequest: options.onRequest ?? [],
    preHandler: options.preHandler ?? [],
    handler: async (request, reply) => {
      const lifted = liftArguments(request.body);
      const caller = options.caller(request);
      // Legacy clients name themselves only in `initialize`, which a stateless server never sees
      // again: the User-Agent is the best name left for their later calls.
      const info = clientInfo(request.body);
      const userAgent = request.headers['user-agent'];
      const protocolVersion = request.headers['mcp-protocol-version'];
      const facts: McpRequestFacts = {
        requestId: String(request.id ?? randomUUID()),
        access: caller.access,
        identity: caller.identity,
        identityKind: caller.identityKind,
        role: caller.role,
        protocolVersion: typeof protocolVersion === 'string' ? protocolVersion.slice(0, 32) : undefined,
        clientName: info.name ?? (typeof userAgent === 'string' ? userAgent.slice(0, 128) : undefined),
        clientVersion: info.version,
        signal: AbortSignal.timeout(options.callDeadlineMs),
        ...(lifted.raw ? { rawArguments: lifted.raw } : {}),
      };
      reply.hijack();
      await requestFacts.run(facts, () => nodeHandler(request.raw, reply.raw, lifted.body));
    },
  });
  app.get(options.path, methodNotAllowed);
  app.delete(options.path, methodNotAllowed);
}
