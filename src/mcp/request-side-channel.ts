import type { AuthInfo } from '@modelcontextprotocol/server';
import type { AccessPolicy } from '../core/access.ts';
import type { CallSignal } from '../core/deadline.ts';

/**
 * The side channel from the HTTP route (and the stdio loop) to the MCP handlers: per-message facts the
 * handlers need but the SDK does not carry. The facts: who calls, the raw tool arguments as sent (the
 * SDK rejects non-object arguments and drops `__proto__` keys before a handler runs), and what the
 * audit record wants to know about the client.
 */
export interface McpRequestFacts {
  requestId: string;
  access: AccessPolicy;
  /** Key name, JWT `sub`, `anonymous`, or `stdio` (the local user of `--stdio`): never a credential. */
  identity: string;
  identityKind: 'api_key' | 'jwt' | 'anonymous' | 'local';
  role: string;
  protocolVersion: string | undefined;
  /** What the client declared in `clientInfo` (this message's, or its initialize's via the session id). */
  clientName: string | undefined;
  clientVersion: string | undefined;
  /** The HTTP User-Agent, cut to 128 characters; absent on stdio. */
  userAgent?: string;
  /** Present when the body is a `tools/call`: its `params.arguments` exactly as parsed from JSON. */
  rawArguments?: { value: unknown };
  signal: CallSignal;
  /**
   * The answer waits for the audit log's `written()` (src/http/mcp-route.ts), so the call's record may
   * be queued with the others of its event-loop turn and written with them at the turn's end.
   */
  auditInTurn?: true;
  /** The JSON-RPC request id of the message (tracing only: `jsonrpc.request.id`). */
  rpcId?: string | number;
  /** The host's W3C trace context: from the message's `_meta`, else the HTTP headers (tracing only). */
  traceparent?: string;
  tracestate?: string;
}

/**
 * The facts ride in the SDK's `authInfo`, which it hands to each handler as `ctx.http.authInfo`
 * exactly as the caller of `fetch` (or `req.auth`, or a transport's `onmessage` extra) gave it: the
 * SDK never fills it from a request and checks nothing in it unless a tool declares a scope challenge
 * (none does: the route's `checkCallScopes` hook, src/auth/authentication.ts, checks scopes).
 * An AsyncLocalStorage carried them before: on Node 20 its first `run` turns on a promise hook for
 * every promise of the process for good, so after the first message the SDK served, every call cost
 * 8-9 % more CPU, lean ones too (bench/RESULTS.md, thirteenth round).
 */
const FACTS_KEY = 'dagu-mcp-gateway/request-facts';

/** The `authInfo` that carries `facts` to the handlers of one message. */
export function carryingFacts(facts: McpRequestFacts): AuthInfo {
  return { token: '', clientId: facts.identity, scopes: [], extra: { [FACTS_KEY]: facts } };
}

/** A handler's facts, from its context; undefined when the message came without them (refused). */
export function factsOf(ctx: { http?: { authInfo?: AuthInfo } } | undefined): McpRequestFacts | undefined {
  return ctx?.http?.authInfo?.extra?.[FACTS_KEY] as McpRequestFacts | undefined;
}
