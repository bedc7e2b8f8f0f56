import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../../../../src/core/access.ts';
import type { ReadError } from '../../../../src/read/errors.ts';
import {
  addressableWikiPage,
  effectivePrefix,
  mapWikiList,
  mapWikiPage,
  mapWikiSearch,
  wikiTargets,
} from '../../../../src/read/targets/wiki.ts';
import type { ReadFields, ResolvedRead } from '../../../../src/read/types.ts';
import { wikiPageUri } from '../../../../src/read/uri-shapes.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

const NO_HIDDEN: AccessPolicy = {
  canReadDag: () => true,
  canReadWorkspace: (workspace) => workspace !== 'hidden',
  readsWorkbooks: true,
  unrestricted: false,
  everyWorkspace: false,
  exactWorkspaces: undefined,
};

function wikiRead(
  target: 'wiki' | 'wiki_page' | 'wiki_search',
  fields: ReadFields,
  raw?: string,
): ResolvedRead {
  const request: ResolvedRead = { mode: 'target', target, fields };
  if (raw !== undefined) {
    request.query = { raw, params: raw.split('&').map((pair) => pair.split('=') as [string, string]) };
  }
  return request;
}

const PAGINATION = { totalRecords: 3, currentPage: 1, totalPages: 1, nextPage: 0, prevPage: 0 };

describe('wiki mapping (2.x body shape)', () => {
  test('addressable page: all → reported workspace (prefix dropped) or default; a named workspace wins', () => {
    assert.deepEqual(addressableWikiPage('all', 'ops', 'ops/runbooks/deploy'), {
      workspace: 'ops',
      path: 'runbooks/deploy',
    });
    assert.deepEqual(addressableWikiPage('all', undefined, 'guides/deploy'), {
      workspace: 'default',
      path: 'guides/deploy',
    });
    assert.deepEqual(addressableWikiPage('ops', 'ops', 'runbooks/deploy'), {
      workspace: 'ops',
      path: 'runbooks/deploy',
    });
  });

  test('tree mode with all selected: file nodes get page URIs, hidden workspaces are filtered', () => {
    const data = mapWikiList(
      {
        pagination: PAGINATION,
        tree: [
          {
            id: 'guides',
            name: 'guides',
            type: 'directory',
            modifiedAt: '2026-10-01T00:00:00Z',
            children: [{ id: 'guides/deploy', name: 'deploy', title: 'Deploy', type: 'file', tags: ['ops'] }],
          },
          {
            id: 'ops',
            name: 'ops',
            type: 'directory',
            workspace: 'ops',
            children: [{ id: 'ops/runbook', name: 'runbook', type: 'file', workspace: 'ops' }],
          },
          { id: 'hidden', name: 'hidden', type: 'directory', workspace: 'hidden', children: [] },
          { id: 'readme', name: 'readme', type: 'file', title: '' },
        ],
      },
      'all',
      NO_HIDDEN,
    );
    assert.deepEqual(data, {
      pagination: PAGINATION,
      tree: [
        {
          id: 'guides',
          name: 'guides',
          type: 'directory',
          modifiedAt: '2026-10-01T00:00:00Z',
          children: [
            {
              id: 'guides/deploy',
              name: 'deploy',
              type: 'file',
              title: 'Deploy',
              tags: ['ops'],
              uri: wikiPageUri('default', 'guides/deploy'),
            },
          ],
        },
        {
          id: 'ops',
          name: 'ops',
          type: 'directory',
          workspace: 'ops',
          children: [
            {
              id: 'ops/runbook',
              name: 'runbook',
              type: 'file',
              workspace: 'ops',
              uri: 'dagu://wiki/ops/runbook',
            },
          ],
        },
        { id: 'readme', name: 'readme', type: 'file', uri: 'dagu://wiki/default/readme' },
      ],
    });
  });

  test('flat mode in a named workspace: items with id, title, description and URI', () => {
    const data = mapWikiList(
      {
        pagination: PAGINATION,
        items: [
          {
            id: 'runbook',
            title: 'Runbook',
            description: 'How to',
            workspace: 'ops',
            modifiedAt: '2026-10-01T00:00:00Z',
          },
          { id: 'a b/c', title: 'C', description: '', tags: [] },
        ],
      },
      'ops',
      UNRESTRICTED_ACCESS,
    );
    assert.deepEqual(data.items, [
      {
        id: 'runbook',
        title: 'Runbook',
        description: 'How to',
        uri: 'dagu://wiki/ops/runbook',
        modifiedAt: '2026-10-01T00:00:00Z',
        workspace: 'ops',
      },
      { id: 'a b/c', title: 'C', description: '', uri: wikiPageUri('ops', 'a b/c') },
    ]);
    assert.equal(data.tree, undefined);
  });

  test('a list without pagination is internal_error', () => {
    assert.throws(
      () => mapWikiList({ tree: [] }, 'all', UNRESTRICTED_ACCESS),
      (error: ReadError) => error.code === 'internal_error',
    );
  });

  test('page: id, content, mimeType, canonical URI and optional metadata', () => {
    assert.deepEqual(
      mapWikiPage(
        {
          id: 'runbooks/deploy',
          title: 'Deploy',
          description: 'Steps',
          content: '---\ntitle: Deploy\n---\n# Deploy\n',
          tags: ['ops'],
          workspace: 'ops',
          createdAt: '2026-10-01T00:00:00Z',
          updatedAt: '2026-10-02T00:00:00Z',
        },
        'ops',
      ),
      {
        id: 'runbooks/deploy',
        content: '---\ntitle: Deploy\n---\n# Deploy\n',
        mimeType: 'text/markdown',
        uri: wikiPageUri('ops', 'runbooks/deploy'),
        title: 'Deploy',
        description: 'Steps',
        tags: ['ops'],
        createdAt: '2026-10-01T00:00:00Z',
        updatedAt: '2026-10-02T00:00:00Z',
        workspace: 'ops',
      },
    );
  });

  test('search: results with URI, matches, hasMoreMatches; hidden workspaces filtered; cursor kept', () => {
    const data = mapWikiSearch(
      {
        results: [
          {
            id: 'guides/deploy',
            title: 'Deploy',
            description: '',
            hasMoreMatches: true,
            nextMatchesCursor: 'm',
            matches: [{ line: 'deploy', lineNumber: 4, startLine: 4 }],
          },
          {
            id: 'hidden/x',
            title: 'X',
            description: '',
            workspace: 'hidden',
            hasMoreMatches: false,
            matches: [],
          },
        ],
        hasMore: true,
        nextCursor: 'next',
      },
      'all',
      NO_HIDDEN,
    );
    assert.deepEqual(data, {
      results: [
        {
          id: 'guides/deploy',
          uri: wikiPageUri('default', 'guides/deploy'),
          title: 'Deploy',
          description: '',
          matches: [{ line: 'deploy', lineNumber: 4, startLine: 4 }],
          hasMoreMatches: true,
          nextMatchesCursor: 'm',
        },
      ],
      hasMore: true,
      nextCursor: 'next',
    });
  });

  test('prefix: the field and the query agree or the read fails on prefix', () => {
    assert.equal(effectivePrefix(wikiRead('wiki', { prefix: 'guides' })), 'guides');
    assert.equal(effectivePrefix(wikiRead('wiki', {}, 'prefix=guides')), 'guides');
    assert.equal(effectivePrefix(wikiRead('wiki', { prefix: 'guides' }, 'prefix=guides')), 'guides');
    assert.throws(
      () => effectivePrefix(wikiRead('wiki', { prefix: 'guides' }, 'prefix=ops')),
      (error: ReadError) => error.code === 'invalid_tool_input' && error.field === 'prefix',
    );
  });
});

describe('wiki handlers', () => {
  const readWiki = wikiTargets.wiki.handle;
  const readPage = wikiTargets.wiki_page.handle;
  const readSearch = wikiTargets.wiki_search.handle;

  test('Dagu 1.x: every Wiki target is resource_unavailable without a call', async () => {
    const dagu = fakeDagu(1, () => assert.fail('no call expected'));
    for (const [handler, request] of [
      [readWiki, wikiRead('wiki', { workspace: 'all' })],
      [readPage, wikiRead('wiki_page', { workspace: 'default', path: 'a' })],
      [readSearch, wikiRead('wiki_search', { workspace: 'all', search: 'x' })],
    ] as const) {
      const error = await rejectsWith(handler(request, depsOf(dagu), OPEN), 'resource_unavailable');
      assert.match(error.message, /Dagu 2\.x/);
    }
  });

  test('wiki: workspace, merged prefix and list parameters are forwarded', async () => {
    const dagu = fakeDagu(2, () => ({ status: 200, body: { pagination: PAGINATION, items: [] } }));
    await readWiki(
      wikiRead('wiki', { workspace: 'ops', prefix: 'runbooks' }, 'flat=true&perPage=10'),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(dagu.calls[0]?.route, '/wiki');
    assert.deepEqual(dagu.calls[0]?.query, [
      ['workspace', 'ops'],
      ['prefix', 'runbooks'],
      ['flat', 'true'],
      ['perPage', '10'],
    ]);
  });

  test('no Wiki store (403 "Wiki page management is not available") is resource_unavailable', async () => {
    const dagu = fakeDagu(2, () => ({
      status: 403,
      body: { code: 'forbidden', message: 'Wiki page management is not available' },
    }));
    const error = await rejectsWith(
      readWiki(wikiRead('wiki', { workspace: 'all' }), depsOf(dagu), OPEN),
      'resource_unavailable',
    );
    assert.match(error.message, /no Wiki store/);
  });

  test('a Dagu without the Wiki routes (router 404, plain text) is resource_unavailable', async () => {
    const dagu = fakeDagu(2, () => ({ status: 404, body: '404 page not found' }));
    await rejectsWith(
      readWiki(wikiRead('wiki', { workspace: 'all' }), depsOf(dagu), OPEN),
      'resource_unavailable',
    );
    await rejectsWith(
      readSearch(wikiRead('wiki_search', { workspace: 'all', search: 'x' }), depsOf(dagu), OPEN),
      'resource_unavailable',
    );
  });

  test('wiki_page: query, mapping, 404 → resource_not_found, unreadable workspace → unauthorized', async () => {
    const dagu = fakeDagu(2, () => ({
      status: 200,
      body: { id: 'deploy', title: 'Deploy', description: '', content: '# Deploy' },
    }));
    const result = await readPage(
      wikiRead('wiki_page', { workspace: 'default', path: 'deploy' }),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(dagu.calls[0]?.route, '/wiki/page');
    assert.deepEqual(dagu.calls[0]?.query, [
      ['workspace', 'default'],
      ['path', 'deploy'],
    ]);
    assert.equal(result.data.uri, 'dagu://wiki/default/deploy');

    const missing = fakeDagu(2, () => ({
      status: 404,
      body: { code: 'not_found', message: 'Wiki page not found' },
    }));
    await rejectsWith(
      readPage(wikiRead('wiki_page', { workspace: 'default', path: 'nope' }), depsOf(missing), OPEN),
      'resource_not_found',
    );

    const never = fakeDagu(2, () => assert.fail('no call expected'));
    await rejectsWith(
      readPage(wikiRead('wiki_page', { workspace: 'hidden', path: 'x' }), depsOf(never), {
        access: NO_HIDDEN,
      }),
      'unauthorized',
    );
  });

  test('wiki_search: q, workspace, prefix, cursor, limit', async () => {
    const dagu = fakeDagu(2, () => ({ status: 200, body: { results: [], hasMore: false } }));
    const result = await readSearch(
      wikiRead('wiki_search', {
        workspace: 'all',
        search: 'deploy',
        prefix: 'guides',
        cursor: 'c',
        limit: 3,
      }),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(dagu.calls[0]?.route, '/search/wiki');
    assert.deepEqual(dagu.calls[0]?.query, [
      ['q', 'deploy'],
      ['workspace', 'all'],
      ['prefix', 'guides'],
      ['cursor', 'c'],
      ['limit', '3'],
    ]);
    assert.deepEqual(result.data, { results: [], hasMore: false });
  });
});
