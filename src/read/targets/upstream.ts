import { type Generation, normalizeResponse } from '../../dagu/dialect.ts';
import type { DaguClient, DaguRequest, DaguResponse } from '../../dagu/types.ts';
import { ReadError, readError } from '../errors.ts';
import type { TargetDeps } from '../handler.ts';
import type { CallContext, ResolvedRead } from '../types.ts';
import { asReadError, upstreamError } from '../upstream/failure.ts';
import { closeNames } from './suggest.ts';

/**
 * What the dags and runs handlers share: one GET with the generation's answers normalised, the
 * error mapping with the read's context, small readers that turn an unexpected body into a clear
 * `internal_error` instead of a half-filled result, and the DAG-name suggestions.
 */

export interface ReadScope {
  request: ResolvedRead;
  deps: TargetDeps;
  call: CallContext;
}

export type Json = Record<string, unknown>;

export const generationOf = (scope: ReadScope): Generation => scope.deps.dagu.generation;

/** A GET whose answer is returned whatever its status (1.x's "500 not_found" already read as 404). */
export async function fetchAny(
  scope: ReadScope,
  request: Omit<DaguRequest, 'signal'>,
): Promise<DaguResponse> {
  const signal = scope.call.signal;
  const response = await getFromDagu(
    scope.deps.dagu,
    signal === undefined ? request : { ...request, signal },
  );
  return normalizeResponse(scope.deps.dagu.generation, response);
}

/** One GET whose client failures (unreachable, timeout, refused path…) arrive as the contract's errors. */
export async function getFromDagu(dagu: DaguClient, request: DaguRequest): Promise<DaguResponse> {
  try {
    return await dagu.get(request);
  } catch (error) {
    throw asReadError(error);
  }
}

/** The error for a non-success answer, in this read's context. */
export function failure(scope: ReadScope, response: DaguResponse, subject?: string) {
  const { request } = scope;
  return upstreamError(response, {
    mode: request.mode,
    target: request.target,
    ...(subject !== undefined ? { subject } : {}),
  });
}

export const isSuccess = (response: DaguResponse) => response.status >= 200 && response.status < 300;

/** A GET that must succeed; returns the JSON object body and the status. */
export async function fetchOk(
  scope: ReadScope,
  request: Omit<DaguRequest, 'signal'>,
  subject?: string,
): Promise<{ body: Json; status: number }> {
  const response = await fetchAny(scope, request);
  if (!isSuccess(response)) throw failure(scope, response, subject);
  return { body: object(response.body, `the answer of ${request.route}`), status: response.status };
}

// ---- body readers ---------------------------------------------------------------------------

const unexpected = (what: string) =>
  readError.internal(`Dagu returned an unexpected response: ${what} is missing or has the wrong type.`);

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function object(value: unknown, what: string): Json {
  if (!isRecord(value)) throw unexpected(what);
  return value;
}

/** `internal_error` for a Dagu body without the shape the gateway needs: names the read and the problem. */
export function malformedBody(read: string, what: string): ReadError {
  return readError.internal(
    `Dagu answered ${read} with a body that does not have the expected shape (${what}).`,
  );
}

/** An array; Dagu serialises empty Go slices as `null`, which reads as `[]`. */
export function list(value: unknown, what: string): unknown[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw unexpected(what);
  return value;
}

export function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw unexpected(what);
  return value;
}

export function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function integer(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw unexpected(what);
  return value;
}

export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

// ---- DAG listing ----------------------------------------------------------------------------

/** Pages of 200 DAGs read at most when a full listing is needed (suggestions, 1.x label filters). */
export const MAX_LIST_PAGES = 50;
const SUGGESTION_PAGES = 10;

/** Every DAG file Dagu lists for `query` (plus `page`/`perPage` added here), up to `maxPages` pages. */
export async function listAllDagFiles(
  scope: ReadScope,
  query: ReadonlyArray<readonly [string, string]>,
  maxPages = MAX_LIST_PAGES,
): Promise<Json[]> {
  const files: Json[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const { body } = await fetchOk(scope, {
      route: '/dags',
      query: [...query, ['page', String(page)], ['perPage', '200']],
    });
    for (const entry of list(body.dags, 'dags')) files.push(object(entry, 'a DAG entry'));
    const pagination = body.pagination as { totalPages?: unknown } | undefined;
    const totalPages = typeof pagination?.totalPages === 'number' ? pagination.totalPages : page;
    if (page >= totalPages) break;
  }
  return files;
}

/** The name a DAG entry is addressed by: its file name, else the DAG's declared name. */
export function dagFileName(entry: Json): string {
  const fileName = optionalText(entry.fileName);
  if (fileName !== undefined) return fileName;
  const dag = entry.dag as { name?: unknown } | undefined;
  return text(dag?.name, 'a DAG entry name');
}

export const DAG_FILE_EXTENSION = /\.ya?ml$/i;

/** The readable DAG names close to `name`, for `details.didYouMean`; empty when none or on any failure. */
export async function suggestDagNames(scope: ReadScope, name: string): Promise<string[]> {
  try {
    const files = await listAllDagFiles(scope, [], SUGGESTION_PAGES);
    const names = files.map(dagFileName).filter((candidate) => scope.call.access.canReadDag(candidate));
    const close = closeNames(name, names);
    // A file name (`two-steps.yaml`) suggests its DAG (`two-steps`) first.
    const stem = name.replace(DAG_FILE_EXTENSION, '');
    if (stem === name || !names.includes(stem)) return close;
    return [stem, ...close.filter((candidate) => candidate !== stem)].slice(0, 5);
  } catch {
    return [];
  }
}

/** True when a DAG of this name exists (a cheap `GET /dags/{fileName}/spec` would also parse it). */
export async function dagExists(scope: ReadScope, name: string): Promise<boolean> {
  try {
    const response = await fetchAny(scope, { route: '/dags/{fileName}', params: { fileName: name } });
    return isSuccess(response);
  } catch {
    return true;
  }
}

/** Adds `details.didYouMean` to a not-found error for a DAG name when close names exist. */
export async function withSuggestions(scope: ReadScope, error: ReadError, name: string): Promise<ReadError> {
  if (error.code !== 'resource_not_found') return error;
  const suggestions = await suggestDagNames(scope, name);
  if (suggestions.length === 0) return error;
  return new ReadError(
    { ...error.toObject(), details: { ...(error.details ?? {}), didYouMean: suggestions } },
    { upstreamStatus: error.upstreamStatus, cause: error.cause },
  );
}

/** The `unauthorized` error when the caller may not read DAG `name`. */
export function assertDagReadable(scope: ReadScope, name: string): void {
  // Dagu also finds a DAG by its file name (`two-steps.yaml`): an alias that would slip past name
  // globs and give one DAG a second URI. The DAG name is the file name without the extension.
  if (DAG_FILE_EXTENSION.test(name)) {
    throw readError.notFound(
      `DAG ${JSON.stringify(name)} does not exist; DAG names have no .yaml extension.`,
    );
  }
  if (scope.call.access.canReadDag(name)) return;
  throw readError.unauthorized(`The credential is not authorized to read DAG ${JSON.stringify(name)}.`);
}
