import type { AccessPolicy } from '../../core/access.ts';
import { ALL_WORKSPACES, DEFAULT_WORKSPACE } from '../../core/contract.ts';
import { dagLabels, serves } from '../../dagu/dialect.ts';
import type { DaguResponse } from '../../dagu/types.ts';
import { defineTarget, type TargetHandler, type TargetRequest } from '../definition.ts';
import { type ReadError, readError } from '../errors.ts';
import { assertWorkspaceReadable, workspaceOfLabels } from '../upstream/access.ts';
import { isRecord, malformedBody, optionalText } from '../upstream/bodies.ts';
import { dagFileName, listAllDagFiles } from '../upstream/dags.ts';
import { failure, fetchAny, isMissingRoute, messageOf } from '../upstream/fetch.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { mapSearchFeed } from '../upstream/search-feed.ts';
import { dagsSpecUri } from '../uri-shapes.ts';

const malformed = (what: string) => malformedBody('a DAG search', what);

/**
 * `dag_search`: a case-insensitive literal search over DAG definitions.
 *
 * Dagu 2.x: `GET /search/dags?q&workspace&cursor&limit` (cursor feed, one preview snippet per DAG,
 * results by file name).
 *
 * Dagu 1.x (verified on 1.30.3) has only `GET /dags/search?q=`: every matching DAG at once, every
 * match with its context lines, `results: null` when nothing matches, and `q` read as a
 * case-insensitive Go regular expression (`l.nes` matches "lines"; `$(seq` fails per file and lands
 * in `errors`). The gateway makes it answer like 2.x: it escapes the search text so it matches
 * literally, keeps at most MAX_LEGACY_MATCHES snippets per DAG (`hasMoreMatches` says when more
 * exist), and pages the results itself with `limit` (default 20, as 2.x) and an opaque cursor of its
 * own, valid only with the same `search` and `workspace` (anything else is `invalid_tool_input` on
 * `cursor`). Dagu 1.x has no workspaces: every DAG is in `default`, so `all` and `default` search
 * everything and any other workspace finds nothing.
 */

export const DEFAULT_SEARCH_LIMIT = 20;
/** Snippets kept per DAG on Dagu 1.x: the page size of Dagu 2.x's snippet endpoint. */
export const MAX_LEGACY_MATCHES = 5;

/** Snippets as Dagu sends them (`{line, lineNumber, startLine}`); `null` reads as none. */
function matchesOf(value: unknown): Record<string, unknown>[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw malformed('matches is not an array');
  return value.map((match) => {
    if (!isRecord(match) || typeof match.line !== 'string') throw malformed('a match without a line');
    const snippet: Record<string, unknown> = { line: match.line };
    if (typeof match.lineNumber === 'number') snippet.lineNumber = match.lineNumber;
    if (typeof match.startLine === 'number') snippet.startLine = match.startLine;
    return snippet;
  });
}

/** May the caller see this DAG? Dagu omits `workspace` for DAGs of the default workspace. */
export function canSeeDag(access: AccessPolicy, name: string, workspace: string | undefined): boolean {
  return (
    access.unrestricted ||
    (access.canReadDag(name) && access.canReadWorkspace(workspace ?? DEFAULT_WORKSPACE))
  );
}

/**
 * `DAGSearchFeedResponse` (2.x body shape) → the contract's DAG search model, filtered by access.
 * `misfiled` names DAGs whose `workspace` label is malformed or ambiguous: the feed reports no
 * workspace for them, as for unlabelled DAGs, but no narrowed caller may see them.
 */
export function mapDagSearchFeed(
  body: unknown,
  access: AccessPolicy,
  misfiled: ReadonlySet<string> = new Set(),
): Record<string, unknown> {
  return mapSearchFeed(body, malformed, (raw) => {
    if (!isRecord(raw)) throw malformed('a result that is not an object');
    const name = optionalText(raw.fileName) ?? optionalText(raw.name);
    if (name === undefined) throw malformed('a result without a file name');
    const workspace = optionalText(raw.workspace);
    if (!canSeeDag(access, name, workspace) || (workspace === undefined && misfiled.has(name)))
      return undefined;
    const result: Record<string, unknown> = {
      name,
      uri: dagsSpecUri(name),
      matches: matchesOf(raw.matches),
      hasMoreMatches: raw.hasMoreMatches === true,
    };
    if (workspace !== undefined) result.workspace = workspace;
    return result;
  });
}

/** Go `regexp.QuoteMeta`: Dagu 1.x compiles `(?i)` + q, so escaping makes the search literal. */
export function quoteGoRegexp(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

interface LegacyCursor {
  search: string;
  workspace: string;
  offset: number;
}

const CURSOR_VERSION = 1;

export function encodeLegacyCursor(cursor: LegacyCursor): string {
  const payload = JSON.stringify({
    v: CURSOR_VERSION,
    q: cursor.search,
    w: cursor.workspace,
    o: cursor.offset,
  });
  return Buffer.from(payload, 'utf8').toString('base64url');
}

const CURSOR_MISMATCH =
  'The cursor does not continue this search; pass a nextCursor of the same dag_search, with search and workspace unchanged.';

/** Decodes the gateway's 1.x cursor; `invalid_tool_input` on `cursor` when it is not one of this search. */
export function decodeLegacyCursor(cursor: string, search: string, workspace: string): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !isRecord(decoded) ||
    decoded.v !== CURSOR_VERSION ||
    decoded.q !== search ||
    decoded.w !== workspace ||
    typeof decoded.o !== 'number' ||
    !Number.isSafeInteger(decoded.o) ||
    decoded.o < 0
  ) {
    throw readError.invalidInput(CURSOR_MISMATCH, { target: 'dag_search', field: 'cursor' });
  }
  return decoded.o;
}

export interface LegacySearchInput {
  search: string;
  workspace: string;
  cursor?: string | undefined;
  limit?: number | undefined;
}

function byName(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const x = a.name as string;
  const y = b.name as string;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Dagu 1.x `GET /dags/search` body → the contract's DAG search model: filtered by access and paged. */
export function mapLegacyDagSearch(
  body: unknown,
  input: LegacySearchInput,
  access: AccessPolicy,
): Record<string, unknown> {
  if (!isRecord(body)) throw malformed('not an object');
  const rawResults = body.results ?? [];
  if (!Array.isArray(rawResults)) throw malformed('results is not an array');
  const offset =
    input.cursor === undefined ? 0 : decodeLegacyCursor(input.cursor, input.search, input.workspace);
  const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
  const inWorkspace = input.workspace === ALL_WORKSPACES || input.workspace === DEFAULT_WORKSPACE;
  const visible: Record<string, unknown>[] = [];
  for (const raw of inWorkspace ? rawResults : []) {
    if (!isRecord(raw)) throw malformed('a result that is not an object');
    const name = optionalText(raw.name);
    if (name === undefined) throw malformed('a result without a name');
    if (!canSeeDag(access, name, undefined)) continue;
    const matches = matchesOf(raw.matches);
    visible.push({
      name,
      uri: dagsSpecUri(name),
      matches: matches.slice(0, MAX_LEGACY_MATCHES),
      hasMoreMatches: matches.length > MAX_LEGACY_MATCHES,
    });
  }
  // Dagu lists the DAG directory in file-name order; sorting again keeps paging stable regardless.
  visible.sort(byName);
  const results = visible.slice(offset, offset + limit);
  const hasMore = offset + limit < visible.length;
  const data: Record<string, unknown> = { results, hasMore };
  if (hasMore) {
    data.nextCursor = encodeLegacyCursor({
      search: input.search,
      workspace: input.workspace,
      offset: offset + limit,
    });
  }
  return data;
}

function searchFailure(scope: ReadScope, response: DaguResponse): ReadError {
  if (isMissingRoute(response)) {
    return readError.unavailable(
      'The connected Dagu does not serve DAG search (GET /search/dags); dag_search needs a Dagu release that has it.',
      { target: scope.request.target },
    );
  }
  // A 400 here is Dagu refusing the search text or (2.x) a cursor of another search.
  return failure(scope, response, { field: /cursor/i.test(messageOf(response)) ? 'cursor' : 'search' });
}

const readDagSearch: TargetHandler<TargetRequest<'search' | 'workspace', 'cursor' | 'limit'>> = async (
  request,
  deps,
  call,
) => {
  const scope: ReadScope = { request, deps, call };
  const { search, workspace, cursor, limit } = request.fields;
  assertWorkspaceReadable(scope, workspace);

  if (!serves(deps.dagu.generation, 'dagSearchFeed')) {
    // A stale or foreign cursor fails before any upstream work.
    if (cursor !== undefined) decodeLegacyCursor(cursor, search, workspace);
    const response = await fetchAny(scope, { route: '/dags/search', query: [['q', quoteGoRegexp(search)]] });
    if (response.status !== 200) throw searchFailure(scope, response);
    return {
      data: mapLegacyDagSearch(response.body, { search, workspace, cursor, limit }, call.access),
      upstreamStatus: response.status,
    };
  }

  const query: Array<[string, string]> = [
    ['q', search],
    ['workspace', workspace],
  ];
  if (cursor !== undefined) query.push(['cursor', cursor]);
  if (limit !== undefined) query.push(['limit', String(limit)]);
  const response = await fetchAny(scope, { route: '/search/dags', query });
  if (response.status !== 200) throw searchFailure(scope, response);
  return {
    data: mapDagSearchFeed(response.body, call.access, await misfiledDags(scope, response.body)),
    upstreamStatus: response.status,
  };
};

/**
 * For a narrowed caller who reads `default` and a feed with results of no workspace: the DAGs whose
 * `workspace` label is malformed or ambiguous, from the DAG list (the feed does not tell them apart).
 */
async function misfiledDags(scope: ReadScope, body: unknown): Promise<ReadonlySet<string>> {
  const { access } = scope.call;
  const results = isRecord(body) && Array.isArray(body.results) ? body.results : [];
  const unplaced = results.some((raw) => isRecord(raw) && optionalText(raw.workspace) === undefined);
  if (access.everyWorkspace || !access.canReadWorkspace(DEFAULT_WORKSPACE) || !unplaced) return new Set();
  const files = await listAllDagFiles(scope, []);
  return new Set(
    files.filter((entry) => workspaceOfLabels(dagLabels(entry.dag)) === undefined).map(dagFileName),
  );
}

export const searchTargets = {
  dag_search: defineTarget({
    fields: {
      required: ['search'],
      optional: ['workspace', 'cursor', 'limit'],
      defaults: { workspace: ALL_WORKSPACES },
    },
    handle: readDagSearch,
  }),
};
