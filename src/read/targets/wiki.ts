import type { AccessPolicy } from '../../core/access.ts';
import { ALL_WORKSPACES, DEFAULT_WORKSPACE } from '../../core/contract.ts';
import { serves, upstreamPair } from '../../dagu/dialect.ts';
import type { DaguResponse } from '../../dagu/types.ts';
import { defineTarget } from '../definition.ts';
import { type ReadError, readError } from '../errors.ts';
import { int, once, oneOf } from '../query-params.ts';
import type { ResolvedRead } from '../types.ts';
import { assertWorkspaceReadable } from '../upstream/access.ts';
import { isRecord, malformedBody, optionalText } from '../upstream/bodies.ts';
import { WIKI_NEEDS_DAGU_2 } from '../upstream/failure.ts';
import { failure, fetchAny, isMissingRoute, messageOf } from '../upstream/fetch.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { mapSearchFeed } from '../upstream/search-feed.ts';
import { SHAPES, wikiPageUri, wikiUri } from '../uri-shapes.ts';

const malformed = (what: string) => malformedBody('a Wiki read', what);

/**
 * `wiki`, `wiki_page` and `wiki_search` over Dagu 2.x's `GET /wiki`, `GET /wiki/page` and
 * `GET /search/wiki`. Page URIs follow Dagu's own rule: with the
 * selected workspace `all`, a page belongs to the workspace Dagu reports for it (its id then starts
 * with `{workspace}/`, which the URI drops) or else to `default`; otherwise to the selected workspace.
 * A Dagu without a Wiki store answers 403 "Wiki page management is not available", which is
 * `resource_unavailable`. Dagu 1.x has no Wiki at all (its router answers a plain-text 404 for every
 * `/wiki` route), so on generation 1 the three targets are `resource_unavailable` without a call.
 */

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

/** The workspace and page path a listed page is addressed by (Dagu's `addressableWikiPagePath` rule). */
export function addressableWikiPage(
  selectedWorkspace: string,
  reportedWorkspace: string | undefined,
  id: string,
): { workspace: string; path: string } {
  if (selectedWorkspace !== '' && selectedWorkspace !== ALL_WORKSPACES) {
    return { workspace: selectedWorkspace, path: id };
  }
  if (reportedWorkspace === undefined || reportedWorkspace === '')
    return { workspace: DEFAULT_WORKSPACE, path: id };
  const prefix = `${reportedWorkspace}/`;
  return { workspace: reportedWorkspace, path: id.startsWith(prefix) ? id.slice(prefix.length) : id };
}

/** May the caller see an entry Dagu lists? With `all` selected, the entry's own workspace decides. */
function visibleEntry(
  access: AccessPolicy,
  selectedWorkspace: string,
  reportedWorkspace: string | undefined,
): boolean {
  if (access.unrestricted || selectedWorkspace !== ALL_WORKSPACES) return true;
  return access.canReadWorkspace(reportedWorkspace ?? DEFAULT_WORKSPACE);
}

function tagsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const tags = value.filter((tag): tag is string => typeof tag === 'string');
  return tags.length > 0 ? tags : undefined;
}

/** Copies the optional page metadata Dagu reports (`tags`, `modifiedAt`, `workspace`). */
function addMetadata(entry: Record<string, unknown>, raw: Record<string, unknown>): void {
  const tags = tagsOf(raw.tags);
  if (tags !== undefined) entry.tags = tags;
  const modifiedAt = optionalText(raw.modifiedAt);
  if (modifiedAt !== undefined) entry.modifiedAt = modifiedAt;
  const workspace = optionalText(raw.workspace);
  if (workspace !== undefined) entry.workspace = workspace;
}

function mapTreeNode(
  raw: unknown,
  selectedWorkspace: string,
  access: AccessPolicy,
): Record<string, unknown> | undefined {
  if (!isRecord(raw) || typeof raw.id !== 'string') throw malformed('a tree node without an id');
  const workspace = optionalText(raw.workspace);
  if (!visibleEntry(access, selectedWorkspace, workspace)) return undefined;
  const type = raw.type === 'directory' ? 'directory' : 'file';
  const entry: Record<string, unknown> = { id: raw.id, name: stringOr(raw.name, raw.id), type };
  const title = optionalText(raw.title);
  if (title !== undefined) entry.title = title;
  addMetadata(entry, raw);
  if (type === 'file') {
    const page = addressableWikiPage(selectedWorkspace, workspace, raw.id);
    entry.uri = wikiPageUri(page.workspace, page.path);
  }
  if (raw.children !== undefined && raw.children !== null) {
    if (!Array.isArray(raw.children)) throw malformed('children is not an array');
    entry.children = mapTree(raw.children, selectedWorkspace, access);
  }
  return entry;
}

function mapTree(
  nodes: unknown[],
  selectedWorkspace: string,
  access: AccessPolicy,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const node of nodes) {
    const mapped = mapTreeNode(node, selectedWorkspace, access);
    if (mapped !== undefined) out.push(mapped);
  }
  return out;
}

/**
 * `WikiPageListResponse` (2.x body shape) → the contract's Wiki collection model: `pagination` as
 * Dagu reports it, `tree` (tree mode) or `items` (flat mode) with canonical page URIs, filtered to
 * the workspaces the caller may read when `all` is selected.
 */
export function mapWikiList(
  body: unknown,
  selectedWorkspace: string,
  access: AccessPolicy,
): Record<string, unknown> {
  if (!isRecord(body)) throw malformed('not an object');
  if (!isRecord(body.pagination)) throw malformed('no pagination');
  const data: Record<string, unknown> = { pagination: body.pagination };
  if (body.items !== undefined && body.items !== null) {
    if (!Array.isArray(body.items)) throw malformed('items is not an array');
    const items: Record<string, unknown>[] = [];
    for (const raw of body.items) {
      if (!isRecord(raw) || typeof raw.id !== 'string') throw malformed('an item without an id');
      const workspace = optionalText(raw.workspace);
      if (!visibleEntry(access, selectedWorkspace, workspace)) continue;
      const page = addressableWikiPage(selectedWorkspace, workspace, raw.id);
      const entry: Record<string, unknown> = {
        id: raw.id,
        title: stringOr(raw.title, ''),
        description: stringOr(raw.description, ''),
        uri: wikiPageUri(page.workspace, page.path),
      };
      addMetadata(entry, raw);
      items.push(entry);
    }
    data.items = items;
  }
  if (body.tree !== undefined && body.tree !== null) {
    if (!Array.isArray(body.tree)) throw malformed('tree is not an array');
    data.tree = mapTree(body.tree, selectedWorkspace, access);
  }
  // Dagu answers tree mode with `tree` and flat mode with `items`; an answer with neither is an empty tree.
  if (data.items === undefined && data.tree === undefined) data.tree = [];
  return data;
}

/** `WikiPageResponse` (2.x body shape) → the contract's Wiki page model. */
export function mapWikiPage(body: unknown, workspace: string): Record<string, unknown> {
  if (!isRecord(body) || typeof body.id !== 'string' || typeof body.content !== 'string') {
    throw malformed('a page without id or content');
  }
  const data: Record<string, unknown> = {
    id: body.id,
    content: body.content,
    mimeType: 'text/markdown',
    uri: wikiPageUri(workspace, body.id),
    title: stringOr(body.title, ''),
    description: stringOr(body.description, ''),
  };
  const tags = tagsOf(body.tags);
  if (tags !== undefined) data.tags = tags;
  const createdAt = optionalText(body.createdAt);
  if (createdAt !== undefined) data.createdAt = createdAt;
  const updatedAt = optionalText(body.updatedAt);
  if (updatedAt !== undefined) data.updatedAt = updatedAt;
  const reported = optionalText(body.workspace);
  if (reported !== undefined) data.workspace = reported;
  return data;
}

/** `WikiPageSearchFeedResponse` (2.x body shape) → the contract's Wiki search model, filtered by access. */
export function mapWikiSearch(
  body: unknown,
  selectedWorkspace: string,
  access: AccessPolicy,
): Record<string, unknown> {
  return mapSearchFeed(body, malformed, (raw) => {
    if (!isRecord(raw) || typeof raw.id !== 'string') throw malformed('a result without an id');
    const workspace = optionalText(raw.workspace);
    if (!visibleEntry(access, selectedWorkspace, workspace)) return undefined;
    const page = addressableWikiPage(selectedWorkspace, workspace, raw.id);
    const matches = raw.matches ?? [];
    if (!Array.isArray(matches)) throw malformed('matches is not an array');
    const entry: Record<string, unknown> = {
      id: raw.id,
      uri: wikiPageUri(page.workspace, page.path),
      title: stringOr(raw.title, ''),
      description: stringOr(raw.description, ''),
      matches,
      hasMoreMatches: raw.hasMoreMatches === true,
    };
    addMetadata(entry, raw);
    return entry;
  });
}

/** Is this Dagu's "no Wiki store" answer? */
export function isWikiUnavailable(response: DaguResponse): boolean {
  return (
    response.status === 403 &&
    isRecord(response.body) &&
    typeof response.body.message === 'string' &&
    /wiki page management is not available/i.test(response.body.message)
  );
}

function wikiFailure(scope: ReadScope, response: DaguResponse): ReadError {
  if (isWikiUnavailable(response)) {
    return readError.unavailable(
      'The connected Dagu has no Wiki store (Wiki page management is not available).',
      { target: scope.request.target },
    );
  }
  if (isMissingRoute(response)) {
    return readError.unavailable('The connected Dagu does not serve the Wiki REST routes (GET /wiki…).');
  }
  // A 400 names the parameter Dagu refused; map it to the input field when one clearly caused it.
  const message = messageOf(response);
  const field = /cursor/i.test(message)
    ? 'cursor'
    : /prefix/i.test(message)
      ? 'prefix'
      : /workspace/i.test(message)
        ? 'workspace'
        : undefined;
  return failure(scope, response, field === undefined ? {} : { field });
}

function requireWiki(scope: ReadScope): void {
  if (!serves(scope.deps.dagu.generation, 'wiki')) throw readError.unavailable(WIKI_NEEDS_DAGU_2);
}

/**
 * The prefix to send: the `prefix` field merged into the query (as Dagu's own tool does). Both the
 * field and a query `prefix` with different values is `invalid_tool_input` on `prefix`.
 */
export function effectivePrefix(request: ResolvedRead): string | undefined {
  const fromField = request.fields.prefix;
  const fromQuery = request.query?.params.find(([key]) => key === 'prefix')?.[1];
  if (fromField !== undefined && fromQuery !== undefined && fromField !== fromQuery) {
    throw readError.invalidInput(
      'Give the Wiki prefix either as the prefix field or in the query, not both.',
      {
        target: request.target,
        field: 'prefix',
      },
    );
  }
  return fromField ?? fromQuery;
}

const WIKI_LIST_PARAMS = new Set(['page', 'perPage', 'flat', 'sort', 'order']);

const WIKI_ECHO = ['workspace', 'path', 'prefix'] as const;

export const wikiTargets = {
  wiki: defineTarget({
    fields: {
      required: [],
      optional: ['workspace', 'query', 'prefix'],
      defaults: { workspace: ALL_WORKSPACES },
    },
    query: {
      params: {
        page: int(1),
        perPage: int(1, 200),
        flat: oneOf('true', 'false'),
        sort: oneOf('name', 'type', 'mtime'),
        order: oneOf('asc', 'desc'),
        prefix: once({ kind: 'wikiPagePrefix' }),
      },
    },
    uri: {
      shapes: [SHAPES.wiki, SHAPES.wikiWorkspace],
      targetMode: (fields, query) => wikiUri(fields.workspace, query),
    },
    echo: WIKI_ECHO,
    handle: async (request, deps, call) => {
      const scope: ReadScope = { request, deps, call };
      const { workspace } = request.fields;
      assertWorkspaceReadable(scope, workspace);
      requireWiki(scope);
      const prefix = effectivePrefix(request);
      const query: Array<[string, string]> = [['workspace', workspace]];
      if (prefix !== undefined) query.push(['prefix', prefix]);
      for (const pair of request.query?.params ?? [])
        if (WIKI_LIST_PARAMS.has(pair[0])) query.push(upstreamPair(pair));
      const response = await fetchAny(scope, { route: '/wiki', query });
      if (response.status !== 200) throw wikiFailure(scope, response);
      return { data: mapWikiList(response.body, workspace, call.access), upstreamStatus: response.status };
    },
  }),
  wiki_page: defineTarget({
    fields: { required: ['workspace', 'path'], optional: [] },
    uri: { shapes: [SHAPES.wikiPage], targetMode: (fields) => wikiPageUri(fields.workspace, fields.path) },
    echo: WIKI_ECHO,
    handle: async (request, deps, call) => {
      const scope: ReadScope = { request, deps, call };
      const { workspace, path } = request.fields;
      assertWorkspaceReadable(scope, workspace);
      requireWiki(scope);
      const response = await fetchAny(scope, {
        route: '/wiki/page',
        query: [
          ['workspace', workspace],
          ['path', path],
        ],
      });
      if (response.status !== 200) throw wikiFailure(scope, response);
      return { data: mapWikiPage(response.body, workspace), upstreamStatus: response.status };
    },
  }),
  wiki_search: defineTarget({
    fields: {
      required: ['search'],
      optional: ['workspace', 'prefix', 'cursor', 'limit'],
      defaults: { workspace: ALL_WORKSPACES },
    },
    echo: WIKI_ECHO,
    handle: async (request, deps, call) => {
      const scope: ReadScope = { request, deps, call };
      const { search, workspace, prefix, cursor, limit } = request.fields;
      assertWorkspaceReadable(scope, workspace);
      requireWiki(scope);
      const query: Array<[string, string]> = [
        ['q', search],
        ['workspace', workspace],
      ];
      if (prefix !== undefined) query.push(['prefix', prefix]);
      if (cursor !== undefined) query.push(['cursor', cursor]);
      if (limit !== undefined) query.push(['limit', String(limit)]);
      const response = await fetchAny(scope, { route: '/search/wiki', query });
      if (response.status !== 200) throw wikiFailure(scope, response);
      return { data: mapWikiSearch(response.body, workspace, call.access), upstreamStatus: response.status };
    },
  }),
};
