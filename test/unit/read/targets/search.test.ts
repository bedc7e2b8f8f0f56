import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../../../../src/core/access.ts';
import type { ReadError } from '../../../../src/read/errors.ts';
import {
  decodeLegacyCursor,
  encodeLegacyCursor,
  MAX_LEGACY_MATCHES,
  mapDagSearchFeed,
  mapLegacyDagSearch,
  quoteGoRegexp,
  searchTargets,
} from '../../../../src/read/targets/search.ts';
import type { ReadFields, ResolvedRead } from '../../../../src/read/types.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

const LIMITED: AccessPolicy = {
  canReadDag: (name) => !name.startsWith('secret'),
  canReadWorkspace: (workspace) => workspace !== 'hidden',
  readsWorkbooks: true,
  unrestricted: false,
  everyWorkspace: false,
  exactWorkspaces: undefined,
};

function searchRead(fields: ReadFields): ResolvedRead {
  return { mode: 'target', target: 'dag_search', fields: { workspace: 'all', ...fields } };
}

const match = (lineNumber: number) => ({ line: `line ${lineNumber}`, lineNumber, startLine: lineNumber });

describe('dag_search mapping (2.x body shape)', () => {
  const FEED = {
    results: [
      {
        fileName: 'etl.daily',
        name: 'etl.daily',
        hasMoreMatches: true,
        nextMatchesCursor: 'm1',
        matches: [match(3)],
      },
      { fileName: 'ops', name: 'ops', workspace: 'hidden', hasMoreMatches: false, matches: [match(1)] },
      { fileName: 'secret-job', name: 'secret-job', hasMoreMatches: false, matches: [match(2)] },
      { fileName: 'team x', name: 'team x', workspace: 'blue', hasMoreMatches: false, matches: [] },
    ],
    hasMore: true,
    nextCursor: 'c2',
  };

  test('results carry name, spec URI, matches, hasMoreMatches; page fields kept', () => {
    const data = mapDagSearchFeed(FEED, UNRESTRICTED_ACCESS);
    assert.equal(data.hasMore, true);
    assert.equal(data.nextCursor, 'c2');
    const results = data.results as Array<Record<string, unknown>>;
    assert.equal(results.length, 4);
    assert.deepEqual(results[0], {
      name: 'etl.daily',
      uri: 'dagu://dags/etl.daily/spec',
      matches: [match(3)],
      hasMoreMatches: true,
      nextMatchesCursor: 'm1',
    });
    assert.deepEqual(results[3], {
      name: 'team x',
      uri: 'dagu://dags/team%20x/spec',
      matches: [],
      hasMoreMatches: false,
      workspace: 'blue',
    });
  });

  test('results are filtered to DAGs and workspaces the caller may read', () => {
    const data = mapDagSearchFeed(FEED, LIMITED);
    assert.deepEqual(
      (data.results as Array<Record<string, unknown>>).map((result) => result.name),
      ['etl.daily', 'team x'],
    );
  });

  test('a DAG whose workspace label is malformed (no workspace in the feed) is left out for a narrowed caller', () => {
    const names = (data: Record<string, unknown>) =>
      (data.results as Array<Record<string, unknown>>).map((result) => result.name);
    assert.deepEqual(names(mapDagSearchFeed(FEED, LIMITED, new Set(['etl.daily']))), ['team x']);
    // A DAG of that name that the feed places in a workspace is judged by that workspace.
    assert.deepEqual(names(mapDagSearchFeed(FEED, LIMITED, new Set(['team x']))), ['etl.daily', 'team x']);
  });

  test('the last page has no nextCursor', () => {
    assert.deepEqual(mapDagSearchFeed({ results: [], hasMore: false }, UNRESTRICTED_ACCESS), {
      results: [],
      hasMore: false,
    });
  });
});

describe('dag_search on Dagu 1.x (1.x body shape)', () => {
  const legacy = (names: string[], matches = 1) => ({
    errors: null,
    results: names.map((name) => ({
      name,
      dag: { name },
      matches: Array.from({ length: matches }, (_, i) => match(i + 1)),
    })),
  });

  test('the search text is escaped so that Go reads it literally', () => {
    assert.equal(quoteGoRegexp('l.nes'), 'l\\.nes');
    assert.equal(
      quoteGoRegexp('$(seq 1 2) [a|b]*+?{^}\\'),
      '\\$\\(seq 1 2\\) \\[a\\|b\\]\\*\\+\\?\\{\\^\\}\\\\',
    );
    assert.equal(quoteGoRegexp('plain words'), 'plain words');
  });

  test('results: null is an empty page', () => {
    assert.deepEqual(
      mapLegacyDagSearch(
        { errors: null, results: null },
        { search: 'x', workspace: 'all' },
        UNRESTRICTED_ACCESS,
      ),
      {
        results: [],
        hasMore: false,
      },
    );
  });

  test('snippets are capped per DAG with hasMoreMatches', () => {
    const data = mapLegacyDagSearch(legacy(['a'], 7), { search: 'x', workspace: 'all' }, UNRESTRICTED_ACCESS);
    const [first] = data.results as Array<Record<string, unknown>>;
    assert.ok(first !== undefined);
    assert.equal((first.matches as unknown[]).length, MAX_LEGACY_MATCHES);
    assert.equal(first.hasMoreMatches, true);
    assert.equal(first.uri, 'dagu://dags/a/spec');
  });

  test('paged by limit with the gateway cursor, filtered by access', () => {
    const body = legacy(['d', 'a', 'secret-b', 'c', 'b']);
    const input = { search: 'x', workspace: 'all', limit: 2 };
    const page1 = mapLegacyDagSearch(body, input, LIMITED);
    assert.deepEqual(
      (page1.results as Array<Record<string, unknown>>).map((result) => result.name),
      ['a', 'b'],
    );
    assert.equal(page1.hasMore, true);
    assert.equal(typeof page1.nextCursor, 'string');
    const page2 = mapLegacyDagSearch(body, { ...input, cursor: page1.nextCursor as string }, LIMITED);
    assert.deepEqual(
      (page2.results as Array<Record<string, unknown>>).map((result) => result.name),
      ['c', 'd'],
    );
    assert.equal(page2.hasMore, false);
    assert.equal(page2.nextCursor, undefined);
  });

  test('a cursor of another search, or not a cursor at all, is invalid_tool_input on cursor', () => {
    const cursor = encodeLegacyCursor({ search: 'x', workspace: 'all', offset: 20 });
    assert.equal(decodeLegacyCursor(cursor, 'x', 'all'), 20);
    for (const [text, search, workspace] of [
      [cursor, 'y', 'all'],
      [cursor, 'x', 'default'],
      ['not-a-cursor', 'x', 'all'],
      [encodeLegacyCursor({ search: 'x', workspace: 'all', offset: -1 }), 'x', 'all'],
    ] as const) {
      assert.throws(
        () => decodeLegacyCursor(text, search, workspace),
        (error: ReadError) => error.code === 'invalid_tool_input' && error.field === 'cursor',
      );
    }
  });

  test('1.x has no workspaces: default and all search everything, another workspace finds nothing', () => {
    const body = legacy(['a']);
    assert.equal(
      (
        mapLegacyDagSearch(body, { search: 'x', workspace: 'default' }, UNRESTRICTED_ACCESS)
          .results as unknown[]
      ).length,
      1,
    );
    assert.deepEqual(mapLegacyDagSearch(body, { search: 'x', workspace: 'blue' }, UNRESTRICTED_ACCESS), {
      results: [],
      hasMore: false,
    });
  });
});

describe('dag_search handler', () => {
  const readSearch = searchTargets.dag_search.handle;

  test('Dagu 2.x: GET /search/dags with q, workspace, cursor and limit', async () => {
    const dagu = fakeDagu(2, () => ({ status: 200, body: { results: [], hasMore: false } }));
    await readSearch(searchRead({ search: 'echo', cursor: 'c1', limit: 5 }), depsOf(dagu), OPEN);
    assert.equal(dagu.calls[0]?.route, '/search/dags');
    assert.deepEqual(dagu.calls[0]?.query, [
      ['q', 'echo'],
      ['workspace', 'all'],
      ['cursor', 'c1'],
      ['limit', '5'],
    ]);
  });

  test('Dagu 2.x: a 400 about the cursor is invalid_tool_input on cursor', async () => {
    const dagu = fakeDagu(2, () => ({
      status: 400,
      body: { code: 'bad_request', message: 'invalid search cursor' },
    }));
    const error = await rejectsWith(
      readSearch(searchRead({ search: 'x', cursor: 'zz' }), depsOf(dagu), OPEN),
      'invalid_tool_input',
    );
    assert.equal(error.field, 'cursor');
  });

  test('Dagu 1.x: GET /dags/search with the escaped text; a foreign cursor fails before the call', async () => {
    const dagu = fakeDagu(1, () => ({ status: 200, body: { errors: null, results: null } }));
    const result = await readSearch(searchRead({ search: '$(seq' }), depsOf(dagu), OPEN);
    assert.equal(dagu.calls[0]?.route, '/dags/search');
    assert.deepEqual(dagu.calls[0]?.query, [['q', '\\$\\(seq']]);
    assert.deepEqual(result.data, { results: [], hasMore: false });

    const error = await rejectsWith(
      readSearch(searchRead({ search: 'x', cursor: 'bogus' }), depsOf(dagu), OPEN),
      'invalid_tool_input',
    );
    assert.equal(error.field, 'cursor');
    assert.equal(dagu.calls.length, 1);
  });

  test('a Dagu without GET /search/dags (router 404, plain text) is resource_unavailable', async () => {
    const dagu = fakeDagu(2, () => ({ status: 404, body: '404 page not found' }));
    await rejectsWith(readSearch(searchRead({ search: 'x' }), depsOf(dagu), OPEN), 'resource_unavailable');
  });

  test('an explicitly named workspace the caller may not read is unauthorized', async () => {
    const dagu = fakeDagu(2, () => assert.fail('no call expected'));
    await rejectsWith(
      readSearch(searchRead({ search: 'x', workspace: 'hidden' }), depsOf(dagu), { access: LIMITED }),
      'unauthorized',
    );
  });
});
