import { ReadError } from '../read/errors.ts';
import type { DaguResponse } from './types.ts';

/**
 * Mapping of Dagu's HTTP answers to the contract's error codes, and the scrubbing that keeps Dagu's
 * internals (absolute file paths, stack traces, long dumps) out of every message the caller sees.
 */

export interface UpstreamErrorContext {
  /** Target mode or URI mode decides how a 400 is reported. */
  mode: 'target' | 'uri';
  target?: string;
  uri?: string;
  /** What was being read, e.g. `DAG "nightly"`; a 404 then says `DAG "nightly" does not exist.` */
  subject?: string;
}

const MAX_MESSAGE = 300;

// An absolute POSIX path: a `/` at the start or after a separator-like character (not after `:`,
// which keeps `scheme://host/...` intact), followed by at least one more path character.
const POSIX_PATH = /(^|[\s"'`(=[{,<])\/(?!\/)[^\s"'`)\]},<>]+/g;
const WINDOWS_PATH = /(^|[\s"'`(=[{,<])[A-Za-z]:[\\/][^\s"'`)\]},<>]*/g;
const STACK_LINE = /^\s*(goroutine \d+|panic:|\S+\.go:\d+|at \S+ \(|created by )/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** Replaces absolute file paths with `<path>`. */
export function scrubPaths(text: string): string {
  return text.replace(POSIX_PATH, '$1<path>').replace(WINDOWS_PATH, '$1<path>');
}

/**
 * A message from Dagu made safe to show: first line only (no stack traces or dumps), paths removed,
 * control characters dropped, length capped. Empty when nothing useful remains.
 */
export function safeUpstreamMessage(value: unknown): string {
  if (typeof value !== 'string') return '';
  const firstLine = value.split(/\r?\n/, 1)[0] ?? '';
  if (STACK_LINE.test(firstLine)) return '';
  const cleaned = scrubPaths(firstLine.replace(CONTROL, ' ')).trim();
  return cleaned.length > MAX_MESSAGE ? `${cleaned.slice(0, MAX_MESSAGE)}…` : cleaned;
}

/** Dagu's error body is `{code, message}`; a plain-text body (e.g. a parameter binding error) is kept as text. */
export function upstreamMessage(body: unknown): string {
  if (typeof body === 'string') return safeUpstreamMessage(body);
  if (body !== null && typeof body === 'object' && 'message' in body) {
    return safeUpstreamMessage((body as { message?: unknown }).message);
  }
  return '';
}

/** Dagu's machine-readable error code (`not_found`, `bad_request`, …), when the body has one. */
export function upstreamCode(body: unknown): string | undefined {
  if (body !== null && typeof body === 'object' && 'code' in body) {
    const code = (body as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

const withDetail = (lead: string, detail: string) => (detail === '' ? `${lead}.` : `${lead}: ${detail}`);

/**
 * The ReadError for a non-success answer from Dagu:
 * 404 → resource_not_found; 400 → invalid_tool_input (target mode) or invalid_resource_uri (URI mode);
 * 401/403 → resource_unavailable, because it is the gateway's own credential that Dagu refused;
 * 499 and 5xx → resource_unavailable; anything else → internal_error.
 */
export function upstreamError(response: DaguResponse, context: UpstreamErrorContext): ReadError {
  const { status } = response;
  const detail = upstreamMessage(response.body);
  const make = (code: ReadError['code'], message: string, field?: string) => {
    const error: ConstructorParameters<typeof ReadError>[0] = { code, message };
    if (context.target !== undefined) error.target = context.target;
    if (field !== undefined) error.field = field;
    if (context.uri !== undefined) error.uri = context.uri;
    return new ReadError(error, { upstreamStatus: status });
  };

  if (status === 404) {
    // With a subject the caller knows what is missing; Dagu's own wording would only repeat it.
    const { subject } = context;
    return make(
      'resource_not_found',
      subject ? `${subject} does not exist.` : withDetail('Not found in Dagu', detail),
    );
  }
  if (status === 400) {
    const message = withDetail('Dagu rejected the request as invalid', detail);
    return context.mode === 'uri'
      ? make('invalid_resource_uri', message, 'uri')
      : make('invalid_tool_input', message);
  }
  if (status === 401 || status === 403) {
    return make(
      'resource_unavailable',
      `Dagu refused the gateway's own credential (HTTP ${status}): the gateway's Dagu token (DAGU_API_TOKEN) is missing, invalid or lacks permission.`,
    );
  }
  if (status === 499 || status >= 500) {
    return make('resource_unavailable', withDetail(`Dagu could not serve the read (HTTP ${status})`, detail));
  }
  return make('internal_error', `Dagu answered with an unexpected HTTP status ${status}.`);
}
