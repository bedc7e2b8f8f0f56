import { merged } from '../../core/merged.ts';
import { normalizeResponse } from '../../dagu/dialect.ts';
import type { DaguRequest, DaguResponse } from '../../dagu/types.ts';
import { ReadError } from '../errors.ts';
import { type Json, object } from './bodies.ts';
import { asReadError, upstreamError } from './failure.ts';
import type { ReadScope } from './scope.ts';

/**
 * The one way a target reaches Dagu: a GET with the caller's signal, the client's failures as the
 * contract's errors, 1.x's "500 not_found" read as the 404 it means, and one failure mapping that
 * knows the read's mode and target.
 */

/**
 * A GET whose answer is returned whatever its status (1.x's "500 not_found" already read as 404); its
 * client failures (unreachable, timeout, refused path…) arrive as the contract's errors. One async
 * function, not one more around the client's call: each costs a promise and a turn per GET.
 */
export async function fetchAny(
  scope: ReadScope,
  request: Omit<DaguRequest, 'signal'>,
): Promise<DaguResponse> {
  const { dagu } = scope.deps;
  const signal = scope.call.signal;
  let response: DaguResponse;
  try {
    response = await dagu.get(signal === undefined ? request : merged(request, { signal }));
  } catch (error) {
    throw asReadError(error);
  }
  return normalizeResponse(dagu.generation, response);
}

export const isSuccess = (response: DaguResponse) => response.status >= 200 && response.status < 300;

export interface FailureOptions {
  /** What was being read, e.g. `DAG "nightly"`; a 404 then says `DAG "nightly" does not exist.` */
  subject?: string;
  /** The input field a 400 in target mode is about, when exactly one can have caused it. */
  field?: string;
}

/** The error for a non-success answer, in this read's context (src/read/upstream/failure.ts). */
export function failure(scope: ReadScope, response: DaguResponse, options: FailureOptions = {}): ReadError {
  const { request } = scope;
  const error = upstreamError(response, {
    mode: request.mode,
    target: request.target,
    ...(options.subject !== undefined ? { subject: options.subject } : {}),
  });
  if (options.field === undefined || error.code !== 'invalid_tool_input' || error.field !== undefined)
    return error;
  return new ReadError(merged(error.toObject(), { field: options.field }), {
    upstreamStatus: error.upstreamStatus,
    cause: error.cause,
  });
}

/** A GET that must succeed; returns the JSON object body and the status. */
export async function fetchOk(
  scope: ReadScope,
  request: Omit<DaguRequest, 'signal'>,
  options: FailureOptions = {},
): Promise<{ body: Json; status: number }> {
  const response = await fetchAny(scope, request);
  if (!isSuccess(response)) throw failure(scope, response, options);
  return { body: object(response.body, `the answer of ${request.route}`), status: response.status };
}

/**
 * A 404 from Dagu's router rather than from a handler: the route does not exist in this Dagu version.
 * Handlers answer JSON `{code, message}`; the router answers plain text ("404 page not found").
 */
export function isMissingRoute(response: DaguResponse): boolean {
  return response.status === 404 && (typeof response.body === 'string' || response.body === undefined);
}

/** Dagu's error message of an answer, `''` when it has none. */
export function messageOf(response: DaguResponse): string {
  const body = response.body as { message?: unknown } | undefined;
  return body !== null && typeof body === 'object' && typeof body.message === 'string' ? body.message : '';
}
