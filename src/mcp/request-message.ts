import { CLIENT_INFO_META_KEY } from '@modelcontextprotocol/server';
import { cutToCodePoints } from '../core/code-points.ts';

/**
 * What every transport (HTTP, stdio) does with an incoming JSON-RPC message before the SDK sees it:
 * take the tool arguments out of band, and read who the client says it is.
 */

type JsonObject = Record<string, unknown>;

const asObject = (value: unknown): JsonObject | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;

/**
 * Keeps the caller's `tools/call` arguments out of band and hands the SDK an empty object instead:
 * the SDK rejects non-object arguments with a protocol error, drops `__proto__` keys, and recurses
 * through whatever it is given, while the contract wants our own validator to see exactly what was
 * sent. An absent `arguments` reads as an empty object.
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

/** The W3C trace context a host gave a message, and its JSON-RPC id (facts for tracing). */
export interface TraceContext {
  rpcId?: string | number;
  traceparent?: string;
  tracestate?: string;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Where tracing is on: the host's `traceparent` (and `tracestate`) from the message's `params._meta`,
 * where MCP hosts put it per message, else from the HTTP request's headers; and the JSON-RPC id.
 * Malformed values are dropped (the call then starts a trace of its own).
 */
export function traceContextOf(
  message: unknown,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): TraceContext {
  const body = asObject(message);
  const meta = asObject(asObject(body?.params)?._meta);
  const context: TraceContext = {};
  if (typeof body?.id === 'string' || typeof body?.id === 'number') context.rpcId = body.id;
  const fromMeta = typeof meta?.traceparent === 'string' && TRACEPARENT.test(meta.traceparent);
  const parent = fromMeta ? meta!.traceparent : headers.traceparent;
  const state = fromMeta ? meta!.tracestate : headers.tracestate;
  if (typeof parent === 'string' && TRACEPARENT.test(parent)) {
    context.traceparent = parent;
    if (typeof state === 'string' && state.length <= 512) context.tracestate = state;
  }
  return context;
}

/** Code points of a client's declared name and version that are kept (what the audit log keeps). */
export const MAX_CLIENT_NAME = 128;
export const MAX_CLIENT_VERSION = 64;

export interface ClientInfo {
  name: string | undefined;
  version: string | undefined;
}

/**
 * Client name and version a message carries: `initialize`'s `clientInfo` (initialize era) or the
 * per-request envelope (2026-07-28); cut to what the audit log keeps.
 */
export function clientInfoOf(message: unknown): ClientInfo {
  const params = asObject(asObject(message)?.params);
  const info = asObject(params?.clientInfo) ?? asObject(asObject(params?._meta)?.[CLIENT_INFO_META_KEY]);
  const text = (value: unknown, max: number) =>
    typeof value === 'string' ? cutToCodePoints(value, max) : undefined;
  return { name: text(info?.name, MAX_CLIENT_NAME), version: text(info?.version, MAX_CLIENT_VERSION) };
}

/** Whether a message is an initialize-era client's `initialize` request. */
export const isInitialize = (message: unknown): boolean => asObject(message)?.method === 'initialize';
