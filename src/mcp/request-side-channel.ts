import { AsyncLocalStorage } from 'node:async_hooks';
import type { AccessPolicy } from '../core/access.ts';
import type { CallSignal } from '../core/deadline.ts';

/**
 * The side channel from the HTTP route to the MCP handlers: per-HTTP-request facts the handlers need
 * but the SDK does not carry. The route runs the SDK inside `requestSideChannel.run(facts, …)`; a
 * handler reads them with `requestSideChannel.getStore()`. The facts: who calls, the raw tool
 * arguments as sent (the SDK rejects non-object arguments and drops `__proto__` keys before a handler
 * runs), and what the audit record wants to know about the client.
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

export const requestSideChannel = new AsyncLocalStorage<McpRequestFacts>();
