import { randomUUID } from 'node:crypto';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { AccessPolicy } from '../core/access.ts';
import { type McpRequestFacts, requestSideChannel } from '../mcp/request-side-channel.ts';

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

/**
 * Keeps the caller's `tools/call` arguments out of band and hands the SDK an empty object instead:
 * the SDK rejects non-object arguments with a protocol error, drops `__proto__` keys, and recurses
 * through whatever it is given, while the contract wants our own validator to see exactly what was
 * sent (design §1b, sdk-notes §4). An absent `arguments` reads as an empty object.
 */
export function liftArguments(body: unknown): { body: unknown; raw?: { value: unknown } } {
  const message = asObject(body);
  const params = asObject(message?.params);
  // A resources/read without a string uri would die in the SDK's schema check as an internal error:
  // an empty uri reaches our reader instead and is answered as the invalid resource URI it is.
  if (message?.method === 'resources/read' && typeof params?.uri !== 'string') {
    return { body: { ...message, params: { ...(params ?? {}), uri: '' } } };
  }
  if (message?.method !== 'tools/call' || params === undefined) return { body };
  const raw = { value: 'arguments' in params ? params.arguments : {} };
  return { body: { ...message, params: { ...params, arguments: {} } }, raw };
}

/** Nesting no JSON-RPC request of this endpoint needs; deeper bodies are refused before the SDK. */
export const MAX_BODY_DEPTH = 32;

/** True when `value` nests deeper than `limit` (iterative: a hostile body cannot overflow the stack). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
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
  const nodeHandler = toNodeHandler(options.handler, {
    maxRequestBodySize: options.bodyLimitBytes,
    onerror: (error) => app.log.error({ err: error }, 'MCP request failed'),
  });

  app.route({
    method: 'POST',
    url: options.path,
    bodyLimit: options.bodyLimitBytes,
    onRequest: options.onRequest ?? [],
    preHandler: options.preHandler ?? [],
    handler: async (request, reply) => {
      const lifted = liftArguments(request.body);
      // Tool arguments are exempt: they never reach the SDK, and our validator answers them.
      if (nestsDeeperThan(lifted.body, MAX_BODY_DEPTH)) {
        return reply.code(400).send({
          jsonrpc: '2.0',
          error: { code: -32600, message: `Invalid request: nested deeper than ${MAX_BODY_DEPTH} levels.` },
          id: null,
        });
      }
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
      await requestSideChannel.run(facts, () => nodeHandler(request.raw, reply.raw, lifted.body));
    },
  });
  app.get(options.path, methodNotAllowed);
  app.delete(options.path, methodNotAllowed);
}
