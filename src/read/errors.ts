import type { ErrorCode } from '../core/contract.ts';
import { merged } from '../core/merged.ts';

/** The contract's error object: `code` and `message` always, the rest exactly when the contract says. */
export interface ToolErrorObject {
  code: ErrorCode;
  message: string;
  target?: string;
  field?: string;
  uri?: string;
  details?: Record<string, unknown>;
}

/**
 * A failure the read service reports to the caller as the contract's error object.
 * `upstreamStatus` is for audit and metrics only; it never reaches the caller.
 */
export class ReadError extends Error {
  readonly code: ErrorCode;
  readonly target: string | undefined;
  readonly field: string | undefined;
  readonly uri: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly upstreamStatus: number | undefined;

  constructor(error: ToolErrorObject, options: { upstreamStatus?: number; cause?: unknown } = {}) {
    super(error.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReadError';
    this.code = error.code;
    this.target = error.target;
    this.field = error.field;
    this.uri = error.uri;
    this.details = error.details;
    this.upstreamStatus = options.upstreamStatus;
  }

  /** A copy that fills `target` and `uri` where this error does not name them yet. */
  withContext(context: { target?: string; uri?: string }): ReadError {
    if ((this.target ?? context.target) === this.target && (this.uri ?? context.uri) === this.uri)
      return this;
    return new ReadError(
      merged(this.toObject(), { target: this.target ?? context.target, uri: this.uri ?? context.uri }),
      { upstreamStatus: this.upstreamStatus, cause: this.cause },
    );
  }

  /**
   * A copy naming exactly this `uri` (or none): the read service decides it from the request, so
   * every target follows the contract's rule the same way.
   */
  withUri(uri: string | undefined): ReadError {
    if (uri === this.uri) return this;
    const { uri: _previous, ...rest } = this.toObject();
    return new ReadError(uri === undefined ? rest : merged(rest, { uri }), {
      upstreamStatus: this.upstreamStatus,
      cause: this.cause,
    });
  }

  toObject(): ToolErrorObject {
    const object: ToolErrorObject = { code: this.code, message: this.message };
    if (this.target !== undefined) object.target = this.target;
    if (this.field !== undefined) object.field = this.field;
    if (this.uri !== undefined) object.uri = this.uri;
    if (this.details !== undefined) object.details = this.details;
    return object;
  }
}

/** Shorthand constructors keep call sites short and the codes spelled once. */
export const readError = {
  invalidInput: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'invalid_tool_input', message, ...extra }),
  invalidUri: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'invalid_resource_uri', message, ...extra }),
  notFound: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'resource_not_found', message, ...extra }),
  unavailable: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'resource_unavailable', message, ...extra }),
  internal: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'internal_error', message, ...extra }),
  unauthorized: (message: string, extra: Omit<ToolErrorObject, 'code' | 'message'> = {}) =>
    new ReadError({ code: 'unauthorized', message, ...extra }),
};

/** Anything thrown that is not a ReadError becomes `internal_error` with a message that leaks nothing. */
export function toReadError(error: unknown, context: { target?: string; uri?: string } = {}): ReadError {
  if (error instanceof ReadError) return error.withContext(context);
  return new ReadError(
    {
      code: 'internal_error',
      message: 'The gateway failed unexpectedly while handling the read.',
      ...context,
    },
    { cause: error },
  );
}
