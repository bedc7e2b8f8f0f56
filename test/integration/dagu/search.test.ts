/**
 * dag_search (and the generation-1 answers of the Wiki targets) against the real, seeded Dagu:
 * raw tool input goes through the real input layer, the handler gets the real Dagu client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';
import { createDaguClient } from '../../../src/dagu/client.ts';
import type { DaguClient } from '../../../src/dagu/types.ts';
import { ReadError } from '../../../src/read/errors.ts';
import { resolveReadInput } from '../../../src/read/input/index.ts';
import { handlersOf } from '../../../src/read/targets/index.ts';
import { searchTargets } from '../../../src/read/targets/search.ts';
import { wikiTargets } from '../../../src/read/targets/wiki.ts';
import { daguApi, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { depsOf } from '../../support/read-deps.ts';

const HANDLERS = handlersOf({ ...searchTargets, ...wikiTargets });

type Data = Record<string, unknown>;
type Result = { name: string; uri: string; matches: Array<Record<string, unknown>>; hasMoreMatches: boolean };

let dagu: TestDagu;
let client: DaguClient;

async function read(
  input: Record<string, unknown>,
  access: AccessPolicy = UNRESTRICTED_ACCESS,
): Promise<Data> {
  const request = resolveReadInput(input);
  const handler = HANDLERS[request.target];
  if (handler === undefined) throw new Error(`no handler for ${request.target}`);
  return (await handler(request, depsOf(client), { access })).data;
}

async function fail(input: Record<string, unknown>, access?: AccessPolicy): Promise<ReadError> {
  try {
    await read(input, access);
  } catch (error) {
    if (error instanceof ReadError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to fail`);
}

const names = (data: Data) => (data.results as Result[]).map((result) => result.name);

before(async () => {
  dagu = await getTestDagu();
  client = createDaguClient({ url: dagu.url, apiBase: dagu.apiBase, token: dagu.token, timeoutMs: 10_000 });
});

after(async () => {
  await client.close();
  await dagu.stop();
});

describe('dag_search against the real Dagu', () => {
  test('results: file name, spec URI, line snippets, hasMoreMatches; no more pages', async () => {
    const { dags } = dagu.seed;
    const data = await read({ target: 'dag_search', search: 'disk quota' });
    assert.deepEqual(names(data), [dags.fails]);
    const [result] = data.results as Result[];
    assert.equal(result?.uri, `dagu://dags/${dags.fails}/spec`);
    assert.equal(result?.hasMoreMatches, false);
    assert.ok((result?.matches.length ?? 0) >= 1);
    assert.match(String(result?.matches[0]?.line), /disk quota exceeded/);
    assert.equal(typeof result?.matches[0]?.lineNumber, 'number');
    assert.equal(data.hasMore, false);
    assert.equal(data.nextCursor, undefined);
  });

  test('the search is literal and case-insensitive (Dagu 1.x would read it as a regular expression)', async () => {
    const { dags } = dagu.seed;
    // "seq 1 3000" is only in many-lines; "s.q" would match far more as a regular expression.
    assert.deepEqual(names(await read({ target: 'dag_search', search: 'SEQ 1 3000' })), [dags.manyLines]);
    assert.deepEqual(names(await read({ target: 'dag_search', search: 's.q 1' })), []);
    // Regex syntax errors on 1.x ("missing closing )") must not hide real matches.
    assert.deepEqual(names(await read({ target: 'dag_search', search: "sh -c 'echo" })).sort(), [
      dags.fails,
      dags.twoSteps,
    ]);
    assert.deepEqual(names(await read({ target: 'dag_search', search: '(prod' })), []);
  });

  test('limit pages the results; nextCursor continues with the same search', async () => {
    const all = names(await read({ target: 'dag_search', search: 'steps:' }));
    assert.ok(all.length >= 5, `expected several DAGs, got ${all.join(', ')}`);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const data = await read({
        target: 'dag_search',
        search: 'steps:',
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      assert.ok((data.results as Result[]).length <= 2);
      seen.push(...names(data));
      if (data.hasMore !== true) {
        assert.equal(data.nextCursor, undefined);
        break;
      }
      assert.equal(typeof data.nextCursor, 'string');
      cursor = data.nextCursor as string;
    }
    assert.deepEqual(seen, all);
  });

  test('a cursor of another search is invalid_tool_input on cursor', async () => {
    const first = await read({ target: 'dag_search', search: 'steps:', limit: 1 });
    assert.equal(typeof first.nextCursor, 'string');
    const error = await fail({ target: 'dag_search', search: 'echo', cursor: first.nextCursor });
    assert.equal(error.code, 'invalid_tool_input');
    assert.equal(error.field, 'cursor');
  });

  test('results are filtered to the DAGs the caller may read', async () => {
    const { dags } = dagu.seed;
    const onlyFails: AccessPolicy = {
      canReadDag: (name) => name === dags.fails,
      canReadWorkspace: () => true,
      readsWorkbooks: true,
      unrestricted: false,
      everyWorkspace: true,
      exactWorkspaces: undefined,
    };
    assert.deepEqual(names(await read({ target: 'dag_search', search: "sh -c 'echo" }, onlyFails)), [
      dags.fails,
    ]);
  });

  test('workspace: default searches the seeded DAGs; another workspace (no DAG of the seed) finds none', async () => {
    const { dags } = dagu.seed;
    assert.deepEqual(
      names(await read({ target: 'dag_search', search: 'disk quota', workspace: 'default' })),
      [dags.fails],
    );
    assert.deepEqual(names(await read({ target: 'dag_search', search: 'disk quota', workspace: 'ops' })), []);
  });
});

describe('Wiki: none on Dagu 1.x, the seeded pages on 2.x', () => {
  test('the Wiki and search routes: a plain-text 404 on 1.x, JSON on 2.x', async () => {
    for (const path of ['/wiki', '/search/wiki?q=a', '/search/dags?q=a']) {
      const raw = await daguApi(dagu, path);
      if (dagu.generation === 1) {
        assert.equal(raw.status, 404, path);
        assert.equal(typeof raw.body, 'string', path);
      } else {
        assert.equal(raw.status, 200, path);
        assert.equal(typeof raw.body, 'object', path);
      }
    }
  });

  test('wiki, wiki_page and wiki_search: resource_unavailable naming Dagu 2.x on 1.x; the seeded pages on 2.x', async () => {
    const inputs = [
      { target: 'wiki' },
      { target: 'wiki', workspace: 'ops', query: 'flat=true' },
      { target: 'wiki_page', workspace: 'default', path: 'guides/deploy' },
      { target: 'wiki_search', search: 'deploy' },
      { target: 'docs' },
      { uri: 'dagu://wiki/default/guides/deploy' },
    ];
    const { v2 } = dagu.seed;
    if (v2 === undefined) {
      for (const input of inputs) {
        const error = await fail(input);
        assert.equal(error.code, 'resource_unavailable', JSON.stringify(input));
        assert.match(error.message, /Dagu 2\.x/);
      }
      return;
    }
    for (const input of inputs) await read(input);
    const deploy = v2.wiki.pages.find((page) => page.path === 'guides/deploy');
    const page = await read({ target: 'wiki_page', workspace: 'default', path: 'guides/deploy' });
    assert.equal(page.content, deploy?.content);
    assert.equal(page.title, deploy?.title);
    assert.deepEqual(page.tags, deploy?.tags);
    assert.deepEqual(await read({ uri: 'dagu://wiki/default/guides/deploy' }), page);
    const ops = await read({ target: 'wiki', workspace: 'ops', query: 'flat=true' });
    const opsPaths = (ops.items as Array<{ id: string }>).map((item) => item.id).sort();
    assert.deepEqual(
      opsPaths,
      v2.wiki.pages
        .filter((seeded) => seeded.workspace === 'ops')
        .map((seeded) => seeded.path)
        .sort(),
    );
    const found = await read({ target: 'wiki_search', search: v2.wiki.opsWord });
    assert.deepEqual((found.results as Array<{ uri: string }>).map((result) => result.uri).sort(), [
      'dagu://wiki/ops/on-call',
      'dagu://wiki/ops/runbooks/restart',
    ]);
  });
});
