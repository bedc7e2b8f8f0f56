import type { ErrorCode } from '../../core/contract.ts';
import { DaguError, type DaguFailureKind, upstreamMessage } from '../../dagu/errors.ts';
import type { DaguResponse } from '../../dagu/types.ts';
import { ReadError } from '../errors.ts';

/** How the read service reports Dagu's answers and the Dagu client's own failures: the contract's codes. */

export interface UpstreamErrorContext {
  /** Target mode or URI mode decides how a 400 is reported. */
  mode: 'target' | 'uri';
  target?: string;
  uri?: string;
  /** What was being read, e.g. `DAG "nightly"`; a 404 then says `DAG "nightly" does not exist.` */
  subject?: string;
}

const CODE_OF_FAILURE: Readonly<Record<DaguFailureKind, ErrorCode>> = {
  unreachable: 'resource_unavailable',
  timeout: 'resource_unavailable',
  cancelled: 'resource_unavailable',
  bad_body: 'internal_error',
  // A value Dagu would read as path structure names nothing: no such resource.
  refused_path: 'resource_not_found',
};

/** The contract's error for a failure of the Dagu client (its message is already safe to show). */
export function readErrorFromDagu(error: DaguError): ReadError {
  return new ReadError(
    { code: CODE_OF_FAILURE[error.kind], message: error.message },
    { upstreamStatus: error.upstreamStatus, cause: error.cause },
  );
}

/** A DaguError as the contract's error; anything else unchanged. */
export function asReadError(error: unknown): unknown {
  return error instanceof DaguError ? readErrorFromDagu(error) : error;
}

/** "Your request was too large": payload (413), URI (414), header fields (431). */
const TOO_LARGE: ReadonlySet<number> = new Set([413, 414, 431]);

const withDetail = (lead: string, detail: string) => (detail === '' ? `${lead}.` : `${lead}: ${detail}`);

/**
 * The ReadError for a non-success answer from Dagu:
 * 404 → resource_not_found; 400, and 413/414/431 (too large) → invalid_tool_input (target mode) or
 * invalid_resource_uri (URI mode);
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
  if (TOO_LARGE.has(status)) {
    // The request passed the input bounds but Dagu (or a proxy before it) found it too large: the
    // caller's input must shrink, as for a 400; retrying unchanged cannot help.
    const message = `Dagu refused the request as too large (HTTP ${status}); shorten the query, search or names.`;
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

// What a target answers when the connected Dagu does not serve what it reads (`resource_unavailable`).

export const WIKI_NEEDS_DAGU_2 =
  'The Wiki is served by Dagu 2.x only; the connected Dagu 1.x has no Wiki (no /wiki REST routes).';
