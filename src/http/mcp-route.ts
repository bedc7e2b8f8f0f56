import { randomUUID } from 'node:crypto';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  LogLevel,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import type { AccessPolicy } from '../core/access.ts';
import { cutToCodePoints } from '../core/code-points.ts';
import { startDeadline } from '../core/deadline.ts';
import { MCP_METHODS } from '../core/mcp-methods.ts';
import { merged } from '../core/merged.ts';
import type { RefusalReason } from '../core/refusal-reasons.ts';
import { clientSessionId, declaredClient } from '../mcp/client-session.ts';
import { createLeanPath, type LeanCall, type LeanPath, matchLeanCall } from '../mcp/lean.ts';
import { clientInfoOf, isInitialize, liftArguments, traceContextOf } from '../mcp/request-message.ts';
import { carryingFacts, type McpRequestFacts } from '../mcp/request-side-channel.ts';
import { createMcpEndpoint, type McpServerOptions, serverInfo } from '../mcp/server.ts';
import { READ_TOOL_NAME } from '../mcp/tool.ts';
import { refuseEncodedBodies } from './body.ts';
import { jsonRpcError, RPC_ERROR, refuse } from './refusals.ts';
import { deferredRequestLogger } from './request-logger.ts';

/** Who is calling, as established by the auth hooks that run before this route. */
export interface Caller {
  identity: string;
  identityKind: McpRequestFacts['identityKind'];
  role: string;
  access: AccessPolicy;
}

export interface McpPluginOptions {
  path: string;
  /** What every MCP server of this endpoint serves (the gateway core's read service, observer, …). */
  server: McpServerOptions;
  bodyLimitBytes: number;
  callDeadlineMs: number;
  caller(request: FastifyRequest): Caller;
  /** Route-level hooks (auth) that must run before the body is parsed. */
  onRequest?: onRequestHookHandler[];
  /** Hooks that need the parsed body (rate limits count tool calls only). */
  preHandler?: preHandlerHookHandler[];
  /** `false` serves every request through the MCP SDK (the reference the lean path is tested against). */
  leanPath?: boolean;
  /** Counts each JSON-RPC message by the path that answered it. */
  served?(path: 'lean' | 'sdk'): void;
  /** Level of the route's request log; its per-request lines are info, warnings and errors stay. */
  logLevel?: LogLevel;
  /**
   * A message outside what the gateway serves (an unknown method or tool; the SDK answers it with
   * -32601 / -32602), or a batch refused whole: for the audit log and the metrics.
   */
  unserved?(
    request: FastifyRequest,
    reply: FastifyReply,
    reason: RefusalReason,
    detail: UnservedDetail,
  ): void;
  /** Tracing is on: each message's facts carry its JSON-RPC id and the host's trace context. */
  traceContext?: boolean;
  /**
   * The audit log's lines of this turn written (undefined: none queued). Given, a lean call's record
   * is queued to the end of its turn and its answer waits for this: one write for the turn's calls,
   * and still no answer before its record.
   */
  auditWritten?(): Promise<void> | undefined;
}

/** What is known of an unserved message: its method and tool name as sent (cut short), the HTTP status. */
export interface UnservedDetail {
  method?: string;
  tool?: string;
  httpStatus: number;
}

// The 2026-07-28 revision's subscription stream is served by the SDK too.
const SERVED_METHODS = new Set<string>([...MCP_METHODS, 'subscriptions/listen']);

/** `unknown_method` or `unknown_tool` for a request the gateway does not serve; notifications are not requests. */
export function unservedReason(
  message: unknown,
): { reason: RefusalReason; method: string; tool?: string } | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method, params, id } = message as { method?: unknown; params?: { name?: unknown }; id?: unknown };
  if (typeof method !== 'string' || id === undefined || method.startsWith('notifications/')) return undefined;
  if (!SERVED_METHODS.has(method)) return { reason: 'unknown_method', method: cutToCodePoints(method, 64) };
  if (method === 'tools/call' && params?.name !== READ_TOOL_NAME) {
    const tool = typeof params?.name === 'string' ? cutToCodePoints(params.name, 64) : undefined;
    return { reason: 'unknown_tool', method, ...(tool === undefined ? {} : { tool }) };
  }
  return undefined;
}

/** Nesting no JSON-RPC request of this endpoint needs; deeper bodies are refused before the SDK. */
export const MAX_BODY_DEPTH = 32;

/**
 * True when `value` nests deeper than `limit`. Recursive, but never deeper than `limit` + 1 frames
 * (a hostile body cannot overflow the stack), and walking a body allocates nothing.
 */
export function nestsDeeperThan(value: unknown, limit: number, depth = 0): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth >= limit) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, limit, depth + 1)) return true;
    return false;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (Object.hasOwn(object, key) && nestsDeeperThan(object[key], limit, depth + 1)) return true;
  }
  return false;
}

const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
  refuse(reply, 'method_not_allowed');

/** The revision that removed JSON-RPC batching from MCP; dates compare as strings. */
export const BATCHES_REMOVED_IN = '2025-06-18';
/** The most messages one batch may carry (the SDK's own transport limit). */
export const MAX_BATCH_MESSAGES = 100;

const invalidRequest = (reply: FastifyReply, message: string) =>
  refuse(reply, 'invalid_request', { message });

/**
 * Batches are refused before any limit counts them when the request declares a revision without
 * batching, or when the batch is malformed as a whole (the SDK's own batch rules).
 */
const refuseUnservableBatches =
  (unserved: McpPluginOptions['unserved']): preHandlerHookHandler =>
  // A callback hook: an async one costs a promise and Fastify's continuation per request.
  (request, reply, done) => {
    const problem = batchProblem(request);
    if (problem === undefined) return done();
    unserved?.(request, reply, 'batch', { httpStatus: 400 });
    invalidRequest(reply, problem);
  };

/** Why a batch cannot be served as a whole; undefined for a single message or a servable batch. */
function batchProblem(request: FastifyRequest): string | undefined {
  if (!Array.isArray(request.body)) return undefined;
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && version >= BATCHES_REMOVED_IN) {
    return `Invalid Request: protocol revision ${cutToCodePoints(version, 32)} has no JSON-RPC batches (removed in ${BATCHES_REMOVED_IN}); send one request per POST.`;
  }
  if (request.body.length > MAX_BATCH_MESSAGES) {
    return `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages`;
  }
  const verdict = classifyInboundRequest({ httpMethod: 'POST', body: request.body });
  return verdict.kind === 'reject' ? verdict.message : undefined;
}

const TOO_DEEP = `Invalid request: nested deeper than ${MAX_BODY_DEPTH} levels.`;
/** The answer to one message of a batch that nests too deep: the rest of the batch is still served. */
const depthError = (id: unknown) => jsonRpcError(RPC_ERROR.invalidRequest, TOO_DEEP, id);

/** An answer to one JSON-RPC message: `body` is its JSON text, absent for notifications. */
interface MessageAnswer {
  status: number;
  body?: string;
}

/** What the route's functions share: its options, the SDK endpoint and its Node handler, the lean path. */
interface EndpointParts {
  options: McpPluginOptions;
  endpoint: ReturnType<typeof createMcpEndpoint>;
  nodeHandler: ReturnType<typeof toNodeHandler>;
  lean: LeanPath | undefined;
  /** Lean calls being answered now: a call's audit record is queued only when another is (answerLean). */
  leanInFlight: number;
}

/**
 * Per-message facts (who calls, the arguments exactly as sent) with the call's deadline, and the lean
 * call when the lean path serves the message; `tooDeep` when the message nests too deep for the SDK.
 * The caller ends the deadline once the message is answered.
 */
function prepare(parts: EndpointParts, request: FastifyRequest, reply: FastifyReply, message: unknown) {
  const { options, lean } = parts;
  const unserved = unservedReason(message);
  if (unserved !== undefined) {
    const { reason, ...detail } = unserved;
    options.unserved?.(request, reply, reason, merged(detail, { httpStatus: 200 }));
  }
  const lifted = liftArguments(message);
  // Tool arguments are exempt: they never reach the SDK, and our validator answers them.
  if (nestsDeeperThan(lifted.body, MAX_BODY_DEPTH)) return { tooDeep: true as const };
  const caller = options.caller(request);
  // Legacy clients name themselves only in `initialize`; their later calls carry the name in the
  // session id `initialize` is answered with (mcp/client-session.ts).
  const client = declaredClient(message, request.headers);
  if (isInitialize(message)) {
    const sessionId = clientSessionId(clientInfoOf(message));
    if (sessionId !== undefined) reply.header('mcp-session-id', sessionId);
  }
  const protocolVersion = request.headers['mcp-protocol-version'];
  const deadline = startDeadline(options.callDeadlineMs, 'The call deadline passed.');
  const facts: McpRequestFacts = {
    requestId: String(request.id ?? randomUUID()),
    access: caller.access,
    identity: caller.identity,
    identityKind: caller.identityKind,
    role: caller.role,
    protocolVersion: typeof protocolVersion === 'string' ? cutToCodePoints(protocolVersion, 32) : undefined,
    ...client,
    signal: deadline.signal,
    ...(lifted.raw ? { rawArguments: lifted.raw } : {}),
  };
  if (options.traceContext === true) Object.assign(facts, traceContextOf(message, request.headers));
  const call = lean === undefined ? undefined : matchLeanCall(message, request.headers);
  options.served?.(call === undefined ? 'sdk' : 'lean');
  return { tooDeep: false as const, sdkBody: lifted.body, facts, deadline, call };
}

/**
 * A lean call's JSON-RPC answer, returned once its audit record is with the OS. The record is queued
 * for the end of the turn (`auditWritten`) only beside other lean calls, whose records share the
 * write: alone, a record waiting for the end of its turn cost a turn of the event loop
 * (bench/RESULTS.md, twelfth round). The SDK writes its answers itself: only a lean answer can wait.
 */
async function answerLean(parts: EndpointParts, call: LeanCall, facts: McpRequestFacts): Promise<string> {
  const { auditWritten } = parts.options;
  if (auditWritten !== undefined && parts.leanInFlight > 0) facts.auditInTurn = true;
  parts.leanInFlight += 1;
  try {
    const body = await parts.lean!.serve(call, facts);
    const written = facts.auditInTurn === true ? auditWritten?.() : undefined;
    if (written !== undefined) await written;
    return body;
  } finally {
    parts.leanInFlight -= 1;
  }
}

/** One message of a batch, answered on its own: by the lean path when it can, else by the SDK. */
async function answerMessage(
  parts: EndpointParts,
  request: FastifyRequest,
  reply: FastifyReply,
  message: unknown,
): Promise<MessageAnswer> {
  const prepared = prepare(parts, request, reply, message);
  if (prepared.tooDeep) {
    const id = (message as { id?: unknown }).id ?? null;
    return { status: 200, body: JSON.stringify(depthError(id)) };
  }
  const { call, facts, deadline } = prepared;
  try {
    if (call !== undefined) return { status: 200, body: await answerLean(parts, call, facts) };
    const webRequest = await toWebRequest(request.raw, prepared.sdkBody);
    const response = await parts.endpoint.fetch(webRequest, {
      parsedBody: prepared.sdkBody,
      authInfo: carryingFacts(facts),
    });
    const text = await response.text();
    return text === '' ? { status: response.status } : { status: response.status, body: text };
  } finally {
    deadline.done();
  }
}

/**
 * A batch (initialize-era revisions only; refuseUnservableBatches has run): every message is served
 * on its own, concurrently (the limits counted each one), and the answers go back as an array, also
 * for a batch of one. A transport-level refusal of any message (406, 415…) answers the whole batch.
 */
async function serveBatch(
  parts: EndpointParts,
  request: FastifyRequest,
  reply: FastifyReply,
  batch: unknown[],
) {
  const answers = await Promise.all(batch.map((message) => answerMessage(parts, request, reply, message)));
  const refused = answers.find((answer) => answer.status !== 200 && answer.status !== 202);
  if (refused !== undefined) {
    return reply
      .code(refused.status)
      .header('content-type', 'application/json')
      .send(refused.body ?? '');
  }
  const bodies = answers.flatMap((answer) => (answer.body === undefined ? [] : [answer.body]));
  if (bodies.length === 0) return reply.code(202).send();
  return reply
    .code(200)
    .header('content-type', 'application/json')
    .send(`[${bodies.join(',')}]`);
}

/** One POST: a batch, or one message answered by the lean path or, hijacking the reply, by the SDK. */
async function serveRequest(parts: EndpointParts, request: FastifyRequest, reply: FastifyReply) {
  if (Array.isArray(request.body)) return serveBatch(parts, request, reply, request.body);
  const prepared = prepare(parts, request, reply, request.body);
  if (prepared.tooDeep) return refuse(reply, 'invalid_request', { message: TOO_DEEP });
  const { call, facts, deadline } = prepared;
  try {
    if (call !== undefined) {
      const payload = await answerLean(parts, call, facts);
      return reply.code(200).header('content-type', 'application/json').send(payload);
    }
    // A hijacked reply sends none of the headers hooks set on it (CORS): hand them to the SDK's response.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    // The Node adapter hands `req.auth` to the SDK as its `authInfo`.
    Object.assign(request.raw, { auth: carryingFacts(facts) });
    await parts.nodeHandler(request.raw, reply.raw, prepared.sdkBody);
  } finally {
    deadline.done();
  }
}

/** Mounts the MCP endpoint: POST serves JSON-RPC; GET and DELETE answer 405 (no streams, no sessions). */
async function mcpEndpoint(app: FastifyInstance, options: McpPluginOptions): Promise<void> {
  const endpoint = createMcpEndpoint({
    ...options.server,
    maxRequestBodySize: options.bodyLimitBytes,
    onError: (error) => app.log.debug({ err: error }, 'mcp transport error'),
  });
  app.addHook('onClose', () => endpoint.close());
  const nodeHandler = toNodeHandler(endpoint, {
    maxRequestBodySize: options.bodyLimitBytes,
    onerror: (error) => app.log.error({ err: error }, 'MCP request failed'),
  });
  const lean =
    options.leanPath === false
      ? undefined
      : createLeanPath({ ...options.server, serverInfo: serverInfo(options.server.version) });
  const parts: EndpointParts = { options, endpoint, nodeHandler, lean, leanInFlight: 0 };
  // No pino child per request while the route's level drops its info lines (request-logger.ts).
  const requestLogger = deferredRequestLogger(app, options.logLevel);

  app.route({
    method: 'POST',
    url: options.path,
    bodyLimit: options.bodyLimitBytes,
    ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    ...(requestLogger === undefined ? {} : { childLoggerFactory: requestLogger }),
    onRequest: [...(options.onRequest ?? []), refuseEncodedBodies],
    preHandler: [refuseUnservableBatches(options.unserved), ...(options.preHandler ?? [])],
    handler: (request, reply) => serveRequest(parts, request, reply),
  });
  // Refused before any body is read: a client ending its session sends DELETE with the JSON content
  // type and no body, which the JSON parser would answer with a 400.
  app.route({
    method: ['GET', 'DELETE'],
    url: options.path,
    // Every initialize-era client tries GET (a stream) and DELETE (a session end): routine, as quiet as POST.
    ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    onRequest: methodNotAllowed,
    handler: methodNotAllowed,
  });
}

export const mcpPlugin = fp(mcpEndpoint, { name: 'dagu-mcp-endpoint', fastify: '5.x' });
