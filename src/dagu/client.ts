import { Pool } from 'undici';
import type { GatewayConfig } from '../config.ts';
import type { CacheSlice } from '../core/byte-lru.ts';
import { hasLoneSurrogate } from '../core/code-points.ts';
import type { CallSignal } from '../core/deadline.ts';
import { merged } from '../core/merged.ts';
import { shownValue } from '../core/shown-value.ts';
import { type Answer, coalescing } from './coalesce.ts';
import type { HealthAnswer } from './detect.ts';
import { createDialectFinder } from './dialect-finder.ts';
import {
  abortError,
  dispatchGet,
  failureOf,
  isTimeoutReason,
  type TransportFailure,
  type UpstreamOutcome,
} from './dispatch.ts';
import { DaguError } from './errors.ts';
import { canName } from './names.ts';
import type { DaguClient, DaguRequest, DaguResponse } from './types.ts';

/**
 * The Dagu REST client: one keep-alive connection pool for the process, a per-call timeout combined
 * with the caller's AbortSignal, the gateway's own bearer token, and path values escaped one segment
 * each. Values Dagu would read as path structure are refused before any request is made. Identical
 * GETs asked for in the same event-loop turn share one request (src/dagu/coalesce.ts). Failures are
 * DaguErrors (src/dagu/errors.ts); the read service turns them into the contract's errors.
 */

export type { UpstreamOutcome } from './dispatch.ts';

export interface DaguClientHooks {
  /** Called once per upstream request with the route template, how it ended and the duration. */
  onUpstream?(route: string, outcome: UpstreamOutcome, seconds: number): void;
  /** Called once per GET answered by a request an identical GET had asked for (src/dagu/coalesce.ts). */
  onJoined?(route: string): void;
  /**
   * CACHE_TTL_MS: successful answers kept for `ttlMs` and given to any GET of the same path meanwhile
   * (an operator's choice: reads may then be that much older than Dagu's state).
   */
  answers?: { cache: CacheSlice<Answer> | undefined; ttlMs: number };
  /**
   * Tracing (src/trace/): called before each request with its route template; the trace it returns,
   * if any, adds its headers (`traceparent`) to the request and is ended with the status or failure.
   */
  traceRequest?(route: string): UpstreamTrace | undefined;
}

/** One traced upstream request (a span while tracing is on). */
export interface UpstreamTrace {
  /** Headers that carry the trace onward (`traceparent`, `tracestate`). */
  readonly headers: Readonly<Record<string, string>>;
  /** The HTTP status, or the DaguError kind (`timeout`, `unreachable`, …) when none came. */
  end(status: number | undefined, failure: string | undefined): void;
}

const PARAM = /\{([A-Za-z][A-Za-z0-9]*)\}/;

/** What a path parameter names, for the not-found message. */
const PARAM_NOUNS: Readonly<Record<string, string>> = {
  name: 'DAG',
  fileName: 'DAG',
  dagRunId: 'DAG-run',
  subRunId: 'sub DAG-run',
  subDAGRunId: 'sub DAG-run',
  stepName: 'step',
  item: 'foreach item',
  bodyStepName: 'body step',
};

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what it finds
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F]/;

/**
 * True when the value cannot be sent to Dagu as the one path segment it is meant to be:
 * - empty, `.` or `..`, or containing `/` or `\`: Dagu cleans paths, so these are path structure;
 * - containing a percent-escape such as `%2F` or `%41`: Dagu decodes the escaped segment itself and,
 *   on the `/dag-runs/{name}` routes of 1.30, decodes the name a second time (observed: the name
 *   `x%2F..%2Ftwo-steps` reads the runs of `two-steps`; `two%2Dsteps` would read `two-steps`), so
 *   such a value would name a different resource;
 * - not well-formed Unicode (a lone surrogate cannot be encoded as UTF-8);
 * - containing a control character: no file or run name has one, and Dagu 1.30 answers such a DAG
 *   name with a 200 stub instead of a not-found (observed with NUL).
 * No DAG, run, sub run or step with such a name can be read through Dagu's REST API.
 */
export function isPathStructure(value: string): boolean {
  return (
    value === '' ||
    value === '.' ||
    value === '..' ||
    value.includes('/') ||
    value.includes('\\') ||
    PERCENT_ESCAPE.test(value) ||
    CONTROL_CHARACTER.test(value) ||
    hasLoneSurrogate(value)
  );
}

/**
 * Expands a route template; throws a `refused_path` DaguError, before any request, for a value that
 * cannot name anything: path structure, or a DAG name, run id or step name outside Dagu's rules.
 */
export function expandRoute(route: string, params: Readonly<Record<string, string>> = {}): string {
  const parts = routeParts(route);
  let path = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i]!;
    const value = params[key];
    if (value === undefined) throw new Error(`dagu client: no value for {${key}} in ${route}`);
    // Path structure, or a name Dagu's own rules do not allow (src/dagu/names.ts): nothing to ask for.
    if (isPathStructure(value) || !canName(key, value)) {
      const noun = PARAM_NOUNS[key] ?? key;
      throw new DaguError('refused_path', `The ${noun} ${shownValue(value)} does not exist.`);
    }
    path += encodeURIComponent(value) + parts[i + 1]!;
  }
  return path;
}

/**
 * A route template split once into its literal text (even indices) and parameter names (odd), so a
 * call joins strings instead of running a pattern with a callback. Templates are the modules' own
 * constants, a few dozen; the cap only keeps a mistake from growing the map.
 */
const ROUTE_PARTS = new Map<string, readonly string[]>();
const MAX_ROUTE_TEMPLATES = 256;

function routeParts(route: string): readonly string[] {
  let parts = ROUTE_PARTS.get(route);
  if (parts === undefined) {
    parts = route.split(PARAM);
    if (ROUTE_PARTS.size < MAX_ROUTE_TEMPLATES) ROUTE_PARTS.set(route, parts);
  }
  return parts;
}

function queryString(query: DaguRequest['query']): string {
  if (query === undefined || query.length === 0) return '';
  return `?${query.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&')}`;
}

export { generationOf } from './detect.ts';

/** Only whitespace (or nothing): tested in place, where `trim()` would copy a body that ends in a newline, as Dagu's do. */
const BLANK = /^\s*$/;

/** An answer's body: its JSON, `undefined` when blank. */
function bodyOf({ status, text }: Answer): DaguResponse {
  if (BLANK.test(text)) return { status, body: undefined };
  try {
    return { status, body: JSON.parse(text) as unknown };
  } catch (error) {
    // Dagu answers some errors (parameter binding, redirects) as plain text; that text is kept for the
    // error mapping. A success answer must be JSON.
    if (status >= 300) return { status, body: text };
    throw new DaguError('bad_body', 'Dagu returned a malformed response (not JSON).', {
      upstreamStatus: status,
      cause: error,
    });
  }
}

/** The headers of every request: JSON, the gateway's name, its own bearer token when it has one. */
function requestHeaders(token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': 'dagu-mcp-gateway',
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return headers;
}

/**
 * One GET of a full path through the pool: the status and the body text, each request reported to
 * `onUpstream` and traced when tracing is on. Transport failures are DaguErrors; `onUnreachable`
 * hears of a request that found no Dagu (the REST dialect is then found again).
 */
function upstreamSender(
  pool: Pool,
  timeoutMs: number,
  headers: Readonly<Record<string, string>>,
  hooks: DaguClientHooks,
  onUnreachable: () => void,
): (route: string, path: string, callerSignal?: CallSignal) => Promise<Answer> {
  function send(route: string, path: string, callerSignal?: CallSignal): Promise<Answer> {
    const traced = hooks.traceRequest?.(route);
    return traced === undefined
      ? sendWith(route, path, headers, callerSignal)
      : sendTraced(traced, route, path, callerSignal);
  }

  async function sendTraced(
    traced: UpstreamTrace,
    route: string,
    path: string,
    callerSignal?: CallSignal,
  ): Promise<Answer> {
    try {
      const answer = await sendWith(route, path, merged(headers, traced.headers), callerSignal);
      traced.end(answer.status, undefined);
      return answer;
    } catch (error) {
      traced.end(undefined, error instanceof DaguError ? error.kind : 'error');
      throw error;
    }
  }

  async function sendWith(
    route: string,
    path: string,
    requestHeaders: Readonly<Record<string, string>>,
    callerSignal?: CallSignal,
  ): Promise<Answer> {
    const started = performance.now();
    let outcome: UpstreamOutcome = 'network_error';
    try {
      const answer = await dispatchGet(pool, path, requestHeaders, timeoutMs, callerSignal);
      outcome = answer.status;
      return answer;
    } catch (error) {
      const failed = failureOf(error as TransportFailure, callerSignal);
      outcome = failed.outcome;
      if (failed.error.kind === 'unreachable') onUnreachable();
      throw failed.error;
    } finally {
      hooks.onUpstream?.(route, outcome, (performance.now() - started) / 1000);
    }
  }

  return send;
}

export function createDaguClient(config: GatewayConfig['dagu'], hooks: DaguClientHooks = {}): DaguClient {
  const base = new URL(config.url);
  const basePath = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: 32,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
  });
  const headers = requestHeaders(config.token);

  const send = upstreamSender(pool, config.timeoutMs, headers, hooks, () => finder.distrust());

  /** The health route under one REST base, its body read leniently (Dagu 2.x answers `/api/v2/health` with HTML). */
  async function askHealth(apiBase: string, signal?: CallSignal): Promise<HealthAnswer> {
    const { status, text } = await send('/health', `${basePath}${apiBase}/health`, signal);
    try {
      const json: unknown = JSON.parse(text);
      if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
        return { status, json: json as Record<string, unknown> };
      }
    } catch {
      // Not JSON: not Dagu's REST API under this base.
    }
    return { status };
  }

  const finder = createDialectFinder(config.apiBase, askHealth);
  const sharedSend = coalescing(send, {
    aborted: (signal) => abortError(isTimeoutReason(signal.reason), signal.reason),
    ...(hooks.onJoined ? { onJoined: hooks.onJoined } : {}),
  });

  async function get(request: DaguRequest): Promise<DaguResponse> {
    // Path-structure values and names Dagu cannot hold fail here, before any connection is used.
    const target = `${expandRoute(request.route, request.params)}${queryString(request.query)}`;
    const { apiBase } = finder.inUse ?? (await finder.resolve(request.signal));
    const path = `${basePath}${apiBase}${target}`;
    const answers = hooks.answers;
    let answer = answers?.cache?.get(path);
    if (answer === undefined) {
      answer = await sharedSend(request.route, path, request.signal);
      if (answers?.cache !== undefined && answer.status >= 200 && answer.status < 300) {
        answers.cache.set(path, answer, answer.text.length * 2 + 16, answers.ttlMs);
      }
    }
    return bodyOf(answer);
  }

  return {
    get generation() {
      return finder.known?.generation ?? 2;
    },
    get,
    ready(signal?: CallSignal): Promise<void> | undefined {
      if (finder.inUse !== undefined) return undefined;
      return finder.resolve(signal).then(() => undefined);
    },
    probe: (signal) => finder.probe(signal),
    async close(): Promise<void> {
      await pool.close();
    },
  };
}
