import { merged } from '../../core/merged.ts';
import { ReadError } from '../errors.ts';
import { canSee, DAG_FILE_EXTENSION } from './access.ts';
import { type Json, list, object, optionalText, text } from './bodies.ts';
import { fetchAny, fetchOk, isSuccess } from './fetch.ts';
import type { ReadScope } from './scope.ts';
import { closeNames } from './suggest.ts';

/** DAG listings and names: full listings, the name a DAG is addressed by, "did you mean". */

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

/** The readable DAG names close to `name`, for `details.didYouMean`; empty when none or on any failure. */
export async function suggestDagNames(scope: ReadScope, name: string): Promise<string[]> {
  try {
    const files = await listAllDagFiles(scope, [], SUGGESTION_PAGES);
    const names = files.filter((entry) => canSeeDagEntry(scope, entry)).map(dagFileName);
    const close = closeNames(name, names);
    // A file name (`two-steps.yaml`) suggests its DAG (`two-steps`) first.
    const stem = name.replace(DAG_FILE_EXTENSION, '');
    if (stem === name || !names.includes(stem)) return close;
    return [stem, ...close.filter((candidate) => candidate !== stem)].slice(0, 5);
  } catch {
    return [];
  }
}

/**
 * True when a DAG of this name exists for the caller: one in a workspace it may not read does not
 * (a cheap `GET /dags/{fileName}/spec` would also parse it).
 */
export async function dagExists(scope: ReadScope, name: string): Promise<boolean> {
  try {
    const response = await fetchAny(scope, { route: '/dags/{fileName}', params: { fileName: name } });
    if (!isSuccess(response)) return false;
    return canSee(scope, object(response.body, 'the DAG details').dag);
  } catch {
    return true;
  }
}

/** May the caller see this entry of `GET /dags`: its name by the DAG allowlist, its labels by workspace. */
export function canSeeDagEntry(scope: ReadScope, entry: Json): boolean {
  return scope.call.access.canReadDag(dagFileName(entry)) && canSee(scope, entry.dag);
}

/**
 * May the caller see DAG `name`, whose details (`dag` of `GET /dags/{fileName}[/spec]`) are `dag`?
 * Without details in hand, and only for a caller narrowed to some workspaces, the DAG is read once.
 */
export async function canSeeDagOf(scope: ReadScope, name: string, dag: unknown): Promise<boolean> {
  if (scope.call.access.everyWorkspace) return true;
  if (dag !== null && typeof dag === 'object') return canSee(scope, dag);
  // Fails closed: a failed read is the read's error, never a sight of the DAG.
  const response = await fetchAny(scope, { route: '/dags/{fileName}', params: { fileName: name } });
  return isSuccess(response) && canSee(scope, object(response.body, 'the DAG details').dag);
}

/** Adds `details.didYouMean` to a not-found error for a DAG name when close names exist. */
export async function withSuggestions(scope: ReadScope, error: ReadError, name: string): Promise<ReadError> {
  if (error.code !== 'resource_not_found') return error;
  const suggestions = await suggestDagNames(scope, name);
  if (suggestions.length === 0) return error;
  return new ReadError(
    merged(error.toObject(), { details: merged(error.details ?? {}, { didYouMean: suggestions }) }),
    { upstreamStatus: error.upstreamStatus, cause: error.cause },
  );
}
