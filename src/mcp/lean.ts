import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { ToolTextMode } from '../config.ts';
import type { ReadService } from '../read/service.ts';
import type { OperationObserver } from './operations.ts';
import type { McpRequestFacts } from './request-side-channel.ts';
import { type ResourceReadAnswer, readResource } from './resources.ts';
import { callReadTool, READ_TOOL_NAME, READ_TOOL_OUTPUT } from './tool.ts';

/**
 * The lean path: `tools/call` of `dagu_read` and `resources/read` answered without an McpServer per
 * request and without web Request/Response conversion. It serves only requests whose shape leaves the
 * SDK nothing to decide, exactly as the two real client generations send them; anything else (another
 * method, a batch, a notification, an unusual header or key, a revision it does not know) returns
 * `undefined` and the SDK answers it. Both paths run the same read-and-observe functions, and a
 * differential test holds their answers identical (the SDK is the reference).
 */

/** The revision the lean path serves on the modern leg; a newer one goes to the SDK. */
const MODERN_REVISION = '2026-07-28';
/** Initialize-era revisions the SDK's stateless transport accepts in `MCP-Protocol-Version`. */
const LEGACY_REVISIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
]);
const TOOL_PARAMS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
const RESOURCE_PARAMS: ReadonlySet<string> = new Set(['uri', '_meta']);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

export type Era = 'modern' | 'legacy';

/** A request the lean path will answer. */
export type LeanCall =
  | { method: 'tools/call'; era: Era; id: string | number; rawArguments: unknown }
  | { method: 'resources/read'; era: Era; id: string | number; uri: string };

type Headers = Readonly<Record<string, string | string[] | undefined>>;
type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const onlyKeys = (object: JsonObject, allowed: ReadonlySet<string>) => {
  for (const key in object) if (!allowed.has(key)) return false;
  return true;
};

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Envelopes the SDK's own classifier accepted. Validating one costs ~40 µs (zod), and a client sends
 * the same envelope on every call; the verdict depends on the envelope alone. Bounded: cleared when
 * full, and long envelopes are never kept.
 */
const acceptedEnvelopes = new Set<string>();
const MAX_ACCEPTED_ENVELOPES = 512;
const MAX_ENVELOPE_KEY_CHARS = 2048;

/**
 * The envelope classified and accepted last, parsed back from its key: a client sends the same one on
 * every call, and comparing in place makes no string (its JSON.stringify made six objects per call).
 * Any other envelope is looked up by its key as before.
 */
let lastAccepted: JsonObject | undefined;

/**
 * Two values as JSON.parse gives them are the same JSON, key order aside (the classifier's verdict
 * does not depend on it). Recursive, but a message nesting deeper than MAX_BODY_DEPTH
 * (src/http/mcp-route.ts) is refused before it gets here.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const left = a as JsonObject;
  const right = b as JsonObject;
  let keys = 0;
  for (const key in left) {
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    keys += 1;
  }
  for (const key in right) if (Object.hasOwn(right, key)) keys -= 1;
  return keys === 0;
}

function sdkAcceptsEnvelope(method: string, meta: JsonObject): boolean {
  if (lastAccepted !== undefined && sameJson(meta, lastAccepted)) return true;
  const key = JSON.stringify(meta);
  if (acceptedEnvelopes.has(key)) return true;
  // The classifier sees the envelope alone (with agreeing headers): header and body checks are done
  // by the caller, strictly, on the real request.
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: MODERN_REVISION,
    mcpMethodHeader: method,
    body: { jsonrpc: '2.0', id: 0, method, params: { _meta: meta } },
  });
  const accepted =
    outcome.kind === 'modern' &&
    outcome.messageKind === 'request' &&
    outcome.classification.revision === MODERN_REVISION;
  if (accepted && key.length <= MAX_ENVELOPE_KEY_CHARS) {
    if (acceptedEnvelopes.size >= MAX_ACCEPTED_ENVELOPES) acceptedEnvelopes.clear();
    acceptedEnvelopes.add(key);
    lastAccepted = JSON.parse(key) as JsonObject;
  }
  return accepted;
}

/** The request the lean path answers, or `undefined` when the SDK must (see the module comment). */
export function matchLeanCall(body: unknown, headers: Headers): LeanCall | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || !onlyKeys(body, MESSAGE_KEYS)) return undefined;
  const { id, method, params } = body;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (!isObject(params)) return undefined;
  const contentType = header(headers, 'content-type');
  if (contentType === undefined || !isJsonContentType(contentType)) return undefined;

  let name: string;
  if (method === 'tools/call') {
    if (params.name !== READ_TOOL_NAME || !onlyKeys(params, TOOL_PARAMS)) return undefined;
    name = READ_TOOL_NAME;
  } else if (method === 'resources/read') {
    if (typeof params.uri !== 'string' || !onlyKeys(params, RESOURCE_PARAMS)) return undefined;
    name = params.uri;
  } else {
    return undefined;
  }

  const version = header(headers, 'mcp-protocol-version');
  let era: Era;
  if (params._meta === undefined) {
    // Initialize era: the SDK's transport wants both media types accepted and a known revision.
    const accept = header(headers, 'accept');
    if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream'))
      return undefined;
    if (version !== undefined && !LEGACY_REVISIONS.has(version)) return undefined;
    era = 'legacy';
  } else {
    const meta = params._meta;
    if (!isObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return undefined;
    if (!onlyKeys(meta, ENVELOPE_KEYS)) return undefined;
    // The standard headers must mirror the body exactly (no whitespace, no Base64 sentinel).
    if (version !== MODERN_REVISION) return undefined;
    if (header(headers, 'mcp-method') !== method || header(headers, 'mcp-name') !== name) return undefined;
    if (name.startsWith('=?')) return undefined;
    if (!sdkAcceptsEnvelope(method, meta)) return undefined;
    era = 'modern';
  }

  return method === 'tools/call'
    ? { method, era, id: id as string | number, rawArguments: 'arguments' in params ? params.arguments : {} }
    : { method, era, id: id as string | number, uri: name };
}

// Serialization: the fixed parts of each answer are written once, at start-up, in the key order the
// SDK writes them, so the two paths answer byte for byte alike (a hand-built writer: the answer is
// mostly `data`, which no schema describes, so a schema-compiled serializer has nothing to gain).
/** What follows a resource answer's contents, by era, up to its `id`. */
type ResourceTails = Readonly<Record<Era, string>>;

function resourceTails(serverInfo: ServerInfo): ResourceTails {
  const serverMeta = JSON.stringify({ [SERVER_INFO_META_KEY]: serverInfo });
  return {
    modern: `,"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":${serverMeta}},"jsonrpc":"2.0","id":`,
    legacy: '},"jsonrpc":"2.0","id":',
  };
}

type ContentItem = CallToolResult['content'][number];

/** One content item with its keys in the SDK's order (its schemas put `type` last on resource links). */
function sdkOrdered(item: ContentItem): ContentItem {
  if (item.type === 'text') return { type: 'text', text: item.text };
  if (item.type === 'resource_link') {
    return { name: item.name, uri: item.uri, mimeType: item.mimeType, type: 'resource_link' };
  }
  throw new Error(`the read tool returned a content item the lean path cannot write: ${item.type}`);
}

/**
 * The whole answer as one object in the SDK's key order, written by one JSON.stringify: no string per
 * item and field joined afterwards. Undefined members (no structured content, no error, the legacy era's
 * `resultType` and `_meta`) are left out by JSON.stringify, as the SDK leaves them out.
 */
function toolResultJson(result: CallToolResult, meta: JsonObject | undefined, id: string | number): string {
  return JSON.stringify({
    result: {
      content: result.content.map(sdkOrdered),
      structuredContent: result.structuredContent,
      isError: result.isError === true ? true : undefined,
      resultType: meta === undefined ? undefined : 'complete',
      _meta: meta,
    },
    jsonrpc: '2.0',
    id,
  });
}

function resourceAnswerJson(answer: ResourceReadAnswer, tail: string, id: string | number): string {
  if (!answer.ok)
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(answer.error)}}`;
  const contents = answer.result.contents
    .map((item) =>
      'text' in item
        ? `{"uri":${JSON.stringify(item.uri)},"mimeType":${JSON.stringify(item.mimeType)},"text":${JSON.stringify(item.text)}}`
        : JSON.stringify(item),
    )
    .join(',');
  return `{"result":{"contents":[${contents}]${tail}${JSON.stringify(id)}}`;
}

/** What the SDK's tool wrapper does around our handler: check a success against the output schema, and
 * turn a throw into a tool error carrying the message. Given the handler's promise, not a closure to
 * call: an async function's throw is its promise's rejection, caught here the same. */
async function checkedToolResult(running: Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    const result = await running;
    if (result.isError === true) return result;
    // The SDK's JSON Schema validator answers synchronously: awaited only if a promise came back.
    const validated = READ_TOOL_OUTPUT['~standard'].validate(result.structuredContent);
    const checked = validated instanceof Promise ? await validated : validated;
    if (checked.issues !== undefined && checked.issues.length > 0) {
      const problems = checked.issues.map((issue) => issue.message).join(', ');
      throw new Error(
        `Output validation error: Invalid structured content for tool ${READ_TOOL_NAME}: ${problems}`,
      );
    }
    return result;
  } catch (error) {
    return {
      content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
      isError: true,
    };
  }
}

export interface ServerInfo {
  name: string;
  title: string;
  version: string;
}

export interface LeanPath {
  /** Runs the call and returns the JSON-RPC response body (HTTP 200, `application/json`). */
  serve(call: LeanCall, facts: McpRequestFacts): Promise<string>;
}

export function createLeanPath(options: {
  reads: ReadService;
  observe: OperationObserver;
  serverInfo: ServerInfo;
  /** What the tool result's text says (`TOOL_TEXT`), as the SDK path. */
  toolText?: ToolTextMode;
}): LeanPath {
  const { reads, observe, toolText } = options;
  const tails = resourceTails(options.serverInfo);
  // The modern era's result `_meta`: the server's info, as the SDK writes it.
  const toolMeta: Readonly<Record<Era, JsonObject | undefined>> = {
    modern: { [SERVER_INFO_META_KEY]: options.serverInfo },
    legacy: undefined,
  };
  return {
    async serve(call, facts) {
      if (call.method === 'tools/call') {
        const result = await checkedToolResult(
          callReadTool(reads, observe, call.rawArguments, facts, toolText),
        );
        return toolResultJson(result, toolMeta[call.era], call.id);
      }
      const answer = await readResource(reads, observe, call.uri, facts);
      return resourceAnswerJson(answer, tails[call.era], call.id);
    },
  };
}
