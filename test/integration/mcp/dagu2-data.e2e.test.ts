// What only Dagu 2.x has, read on real 2.x data through the gateway and a real MCP client (issue 12
// item 6): the Wiki (tree and flat collections, pages, search with cursors, workspaces), a step waiting
// on a human task, a foreach step, labels. On a Dagu 1.x suite run these tests skip: the 2.x subset of
// the runner reads them on the 2.x Dagu (under CI the suite runs against 2.x, where a skip fails).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { skipUnlessCI } from '../../support/ci.ts';
import type { SeedWikiPage } from '../../support/dagu.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

type Data = Record<string, unknown>;

const on = gatewayOnTestDagu(undefined, { client: true });

/** The 2.x part of the seed, or a skip on Dagu 1.x. */
function v2(t: { skip(message: string): void }) {
  if (on.dagu.generation !== 2 || on.dagu.seed.v2 === undefined) {
    t.skip(skipUnlessCI('Dagu 1.x has none of this; the 2.x subset of the run reads it'));
    return undefined;
  }
  return on.dagu.seed.v2;
}

async function read(args: Record<string, unknown>): Promise<{ envelope: Data; data: Data }> {
  const result = await on.client.callTool(args);
  assert.notEqual(
    result.isError,
    true,
    `${JSON.stringify(args)} → ${JSON.stringify(result.structuredContent)}`,
  );
  const envelope = result.structuredContent as Data;
  return { envelope, data: envelope.data as Data };
}

const pageUri = (page: { workspace: string; path: string }) =>
  `dagu://wiki/${page.workspace}/${page.path.split('/').map(encodeURIComponent).join('/')}`;

/** Every page URI of a tree, depth first. */
function treeUris(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry: Data) => [
    ...(typeof entry.uri === 'string' ? [entry.uri] : []),
    ...treeUris(entry.children),
  ]);
}

describe('the Wiki of a real Dagu 2.x', () => {
  test('wiki (all workspaces): a tree holding every seeded page with its canonical URI, and pagination', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    const { data, envelope } = await read({ target: 'wiki' });
    assert.equal(envelope.uri, 'dagu://wiki');
    assert.equal(typeof data.pagination, 'object');
    assert.deepEqual(treeUris(data.tree).sort(), seed.wiki.pages.map(pageUri).sort());
    for (const entry of data.tree as Data[]) assert.equal(typeof entry.id, 'string');
  });

  test('wiki of one workspace, flat: that workspace’s pages only, echoing the workspace', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    for (const workspace of ['default', ...seed.wiki.workspaces] as string[]) {
      const { data, envelope } = await read({ target: 'wiki', workspace, query: 'flat=true' });
      assert.equal(envelope.workspace, workspace);
      assert.equal(envelope.uri, `dagu://wiki/${workspace}?flat=true`);
      const expected: SeedWikiPage[] = seed.wiki.pages.filter((page) => page.workspace === workspace);
      const items = data.items as Data[];
      assert.deepEqual(
        items.map((item) => item.id).sort(),
        expected.map((page) => page.path).sort(),
        workspace,
      );
      assert.deepEqual(items.map((item) => item.uri).sort(), expected.map(pageUri).sort(), workspace);
    }
  });

  test('wiki with a prefix lists only the pages under it', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    const { data, envelope } = await read({ target: 'wiki', workspace: 'default', prefix: 'guides' });
    assert.equal(envelope.prefix, 'guides');
    const expected = seed.wiki.pages.filter(
      (page) => page.workspace === 'default' && page.path.startsWith('guides/'),
    );
    assert.ok(expected.length >= 2, 'the seed has pages under guides/');
    assert.deepEqual(treeUris(data.tree).sort(), expected.map(pageUri).sort());
  });

  test('wiki_page: id, Markdown content, mimeType and canonical URI of every seeded page, target and URI mode', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    for (const page of seed.wiki.pages) {
      const { data, envelope } = await read({
        target: 'wiki_page',
        workspace: page.workspace,
        path: page.path,
      });
      assert.equal(data.id, page.path);
      assert.equal(data.content, page.content);
      assert.equal(data.mimeType, 'text/markdown');
      assert.equal(data.uri, pageUri(page));
      assert.equal(envelope.uri, pageUri(page));
      assert.equal(envelope.workspace, page.workspace);
      assert.equal(envelope.path, page.path);
      const byUri = await read({ uri: pageUri(page) });
      assert.equal(byUri.data.content, page.content);
      assert.equal(byUri.envelope.target, 'wiki_page');
    }
  });

  test('wiki_page of a page that does not exist is resource_not_found with its URI', async (t) => {
    if (v2(t) === undefined) return;
    const result = await on.client.callTool({
      target: 'wiki_page',
      workspace: 'ops',
      path: 'runbooks/missing',
    });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.code, 'resource_not_found');
    assert.equal(result.structuredContent?.uri, 'dagu://wiki/ops/runbooks/missing');
  });

  test('wiki_search pages through every page with limit and nextCursor; a workspace narrows it', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    const found: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { data } = await read({
        target: 'wiki_search',
        search: seed.wiki.commonWord,
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      const results = data.results as Data[];
      assert.ok(results.length <= 2);
      for (const result of results) {
        assert.equal(typeof result.id, 'string');
        assert.ok(Array.isArray(result.matches) && result.matches.length > 0);
        assert.equal(typeof result.hasMoreMatches, 'boolean');
        found.push(result.uri as string);
      }
      cursor = data.nextCursor as string | undefined;
      assert.equal(data.hasMore, cursor !== undefined);
      if (cursor === undefined) break;
    }
    assert.deepEqual(found.sort(), seed.wiki.pages.map(pageUri).sort());

    const ops = await read({ target: 'wiki_search', search: seed.wiki.opsWord, workspace: 'ops' });
    const opsPages = seed.wiki.pages.filter((page) => page.workspace === 'ops');
    assert.deepEqual(
      (ops.data.results as Data[]).map((result) => result.uri).sort(),
      opsPages.map(pageUri).sort(),
    );
    const elsewhere = await read({ target: 'wiki_search', search: seed.wiki.opsWord, workspace: 'data' });
    assert.deepEqual(elsewhere.data.results, []);
  });
});

describe('2.x run details on real runs', () => {
  test('a step waiting on a human task carries humanTask with its prompt and form', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    const { data } = await read({
      target: 'run',
      name: on.dagu.seed.dags.humanTask,
      dagRunId: seed.runs.humanTask,
    });
    assert.equal(data.statusLabel, 'waiting');
    const steps = data.steps as Data[];
    const waiting = steps.find((step) => step.name === seed.humanTask.stepName);
    assert.equal(waiting?.statusLabel, 'waiting');
    assert.deepEqual(waiting?.humanTask, {
      prompt: seed.humanTask.prompt,
      form: {
        type: 'object',
        properties: { auditor: { type: 'string' } },
        required: ['auditor'],
        additionalProperties: false,
      },
    });
    for (const step of steps.filter((step) => step !== waiting)) assert.equal(step.humanTask, undefined);
  });

  test('a foreach step carries foreachUri, the canonical foreach-items URI of that step', async (t) => {
    const seed = v2(t);
    if (seed === undefined) return;
    const name = on.dagu.seed.dags.foreach ?? '';
    const { data } = await read({ target: 'run', name, dagRunId: seed.runs.foreach });
    const steps = data.steps as Data[];
    const foreach = steps.find((step) => step.name === seed.foreach.stepName);
    assert.equal(
      foreach?.foreachUri,
      `dagu://runs/${name}/${seed.runs.foreach}/steps/${encodeURIComponent(seed.foreach.stepName)}/foreach`,
    );
    for (const step of steps.filter((step) => step !== foreach)) assert.equal(step.foreachUri, undefined);
  });

  test('labels of a DAG are read from 2.x `labels`, in dag and dags', async (t) => {
    if (v2(t) === undefined) return;
    const { dags, facts } = on.dagu.seed;
    const { data } = await read({ target: 'dag', name: dags.labelled });
    assert.deepEqual(data.labels, facts.labels.labelled);
    const listed = await read({ target: 'dags', query: 'labels=beta' });
    assert.deepEqual(
      (listed.data.items as Data[]).map((item) => [item.name, item.labels]),
      [[dags.labelled, facts.labels.labelled]],
    );
  });
});
