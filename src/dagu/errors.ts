/**
 * The Dagu client's own failures, and the scrubbing that keeps Dagu's internals (absolute file paths,
 * stack traces, long dumps) out of every message the caller sees. The read service maps a DaguError
 * to the contract's error (src/read/upstream/failure.ts); this layer knows nothing of the contract.
 */

/**
 * - `unreachable`: no connection or no answer;
 * - `timeout`: the per-call timeout (or the caller's deadline) ran out;
 * - `cancelled`: the caller went away before Dagu answered;
 * - `bad_body`: an answer that cannot be read (cut short, too large, a success that is not JSON);
 * - `refused_path`: a path value Dagu would read as path structure; nothing was sent.
 */
export type DaguFailureKind = 'unreachable' | 'timeout' | 'cancelled' | 'bad_body' | 'refused_path';

export class DaguError extends Error {
  override readonly name = 'DaguError';
  readonly kind: DaguFailureKind;
  /** The HTTP status when Dagu answered (a `bad_body`); for audit and metrics only. */
  readonly upstreamStatus: number | undefined;

  constructor(
    kind: DaguFailureKind,
    message: string,
    options: { upstreamStatus?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.upstreamStatus = options.upstreamStatus;
  }
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
