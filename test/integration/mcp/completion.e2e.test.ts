// `completion/complete` end to end against the seeded real Dagu, through both MCP clients (v2 on
// 2026-07-28, v1 initialize-era): DAG names, run ids, step names, sub-run ids, workspaces, reference
// topics, query parameter names and values, prompt arguments; the allowlist filters them exactly as
// it filters reads; completions are rate-limited and audited like tool calls.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  bearer,
  httpFailure,
  newApiKey,
  startCapturedGateway,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { startDagu } from '../../support/dagu.ts';
import { CONNECTORS, type CompleteParams, type TestClient, withClient } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const FULL_KEY = newApiKey('full');
const SCOPED_KEY = newApiKey('scoped');
const LIMITED_KEY = newApiKey('limited');

const RUN = 'dagu://runs/{name}/{dagRunId}';
const SUB = `${RUN}/sub/{subRunId}`;
const LOG_QUERY = '{?tail,head,offset,limit,stream}';
const STEP_LOG = `${RUN}/steps/{stepName}/logs${LOG_QUERY}`;
const SUB_STEP_LOG = `${SUB}/steps/{stepName}/logs${LOG_QUERY}`;
const SPEC = 'dagu://dags/{name}/spec';
const WIKI = 'dagu://wiki/{workspace}{?page,perPage,flat,sort,order,prefix}';
const WIKI_PAGE = 'dagu://wiki/{workspace}/{+path}';
const RUNS = 'dagu://runs{?name,dagRunId,status*,fromDate,toDate,limit,cursor,labels}';

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([
    { name: 'full', key: FULL_KEY },
    { name: 'two-only', key: SCOPED_KEY, dags: ['two-*'], workspaces: ['ops', 'default'] },
  ]),
}));

const template = (
  uri: string,
  name: string,
  value = '',
  context?: Record<string, string>,
): CompleteParams => ({
  ref: { type: 'ref/resource', uri },
  argument: { name, value },
  ...(context ? { context: { arguments: context } } : {}),
});

const withKey = (era: 'modern' | 'legacy', key: string, use: (client: TestClient) => Promise<void>) =>
  withClient(era, on.gateway.mcpUrl, bearer(key), use);

for (const era of ['modern', 'legacy'] as const) {
  describe(`completion/complete (${era} client)`, () => {
    test('declares the completions capability', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        assert.deepEqual(client.serverCapabilities()?.completions, {});
      });
    });

    test('DAG names: every DAG for an empty value, a case-insensitive prefix otherwise', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const all = (await client.complete(template(SPEC, 'name'))).completion;
        assert.deepEqual([...all.values].sort(), Object.values(on.dagu.seed.dags).sort());
        assert.equal(all.total, on.dagu.seed.dagCount);
        assert.equal(all.hasMore, false);
        assert.deepEqual((await client.complete(template(SPEC, 'name', 'TWO'))).completion, {
          values: ['two-steps'],
          total: 1,
          hasMore: false,
        });
        // Dagu's name filter matches anywhere ("o" is in five names); completion wants the beginning.
        assert.deepEqual((await client.complete(template(SPEC, 'name', 'o'))).completion.values, []);
        assert.deepEqual((await client.complete(template(SPEC, 'name', 'no-such-'))).completion.values, []);
      });
    });

    test('run ids: latest, then the runs newest first; narrowed by the typed prefix', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const { runs, dags } = on.dagu.seed;
        const context = { name: dags.twoSteps };
        const { completion } = await client.complete(template(RUN, 'dagRunId', '', context));
        assert.deepEqual(completion, {
          values: ['latest', runs.twoStepsSecond, runs.twoStepsFirst],
          total: 3,
          hasMore: false,
        });
        const narrowed = await client.complete(template(RUN, 'dagRunId', runs.twoStepsFirst, context));
        assert.deepEqual(narrowed.completion.values, [runs.twoStepsFirst]);
        const lat = await client.complete(template(STEP_LOG, 'dagRunId', 'lat', context));
        assert.deepEqual(lat.completion.values, ['latest']);
        const noName = await client.complete(template(RUN, 'dagRunId'));
        assert.deepEqual(noName.completion.values, [], 'without the DAG name there is nothing to list');
      });
    });

    test('step names of a run and of a sub run; sub-run ids of a run', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const { runs, dags, facts } = on.dagu.seed;
        const steps = await client.complete(
          template(STEP_LOG, 'stepName', '', { name: dags.twoSteps, dagRunId: 'latest' }),
        );
        assert.deepEqual(steps.completion.values, facts.twoStepsStepNames);
        const second = await client.complete(
          template(STEP_LOG, 'stepName', 'step t', { name: dags.twoSteps, dagRunId: runs.twoStepsFirst }),
        );
        assert.deepEqual(second.completion.values, ['step two']);
        const subs = await client.complete(
          template(SUB, 'subRunId', '', { name: dags.parent, dagRunId: 'latest' }),
        );
        assert.deepEqual(subs.completion.values, [runs.childSub]);
        const subSteps = await client.complete(
          template(SUB_STEP_LOG, 'stepName', '', {
            name: dags.parent,
            dagRunId: runs.parent,
            subRunId: runs.childSub,
          }),
        );
        assert.deepEqual(subSteps.completion.values, ['inner step']);
        const missingRun = await client.complete(
          template(STEP_LOG, 'stepName', '', { name: dags.twoSteps, dagRunId: 'no-such-run' }),
        );
        assert.deepEqual(missingRun.completion, { values: [], total: 0, hasMore: false });
      });
    });

    test('workspaces, reference topics, query parameter names and closed query values', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const workspaces = (await client.complete(template(WIKI, 'workspace'))).completion.values;
        assert.ok(workspaces.includes('default'), JSON.stringify(workspaces));
        if (on.dagu.generation === 1) assert.deepEqual(workspaces, ['default'], 'Dagu 1.x has one workspace');
        const pages = (workspace: string) => client.complete(template(WIKI_PAGE, 'path', '', { workspace }));
        if (on.dagu.generation === 1) {
          // No wiki on Dagu 1.x: an error that says so, not an empty list.
          await assert.rejects(pages('default'), (error: unknown) => {
            assert.equal((error as { data?: { code?: string } }).data?.code, 'resource_unavailable');
            return true;
          });
        } else {
          // Every workspace the 2.x seed fills: the paths are exactly what a wiki read lists.
          let listed = 0;
          for (const workspace of workspaces) {
            const read = await client.callTool({ target: 'wiki', workspace, query: 'flat=true&perPage=200' });
            const ids = (read.structuredContent!.data as { items: Array<{ id: string }> }).items.map(
              (item) => item.id,
            );
            assert.deepEqual((await pages(workspace)).completion.values, ids, workspace);
            listed += ids.length;
          }
          assert.ok(listed > 0, 'the seeded pages are suggested');
          assert.ok(workspaces.length > 1, `the 2.x seed has workspaces besides default: ${workspaces}`);
        }
        const topics = await client.complete(template('dagu://reference/{topic}', 'topic', 'read'));
        assert.deepEqual(topics.completion.values, ['read-tool']);
        const names = await client.complete(template(STEP_LOG, 'query', 'tail=50&'));
        assert.deepEqual(names.completion.values, [
          'tail=50&head=',
          'tail=50&offset=',
          'tail=50&limit=',
          'tail=50&stream=',
        ]);
        const partial = await client.complete(template(SPEC, 'query', 'x'));
        assert.deepEqual(partial.completion.values, [], 'dag_spec takes no query');
        const dagsQuery = await client.complete(
          template('dagu://dags{?page,perPage,name,labels,sort,order}', 'query', 'so'),
        );
        assert.deepEqual(dagsQuery.completion.values, ['sort=']);
        const stream = await client.complete(template(STEP_LOG, 'stream', 'std'));
        assert.deepEqual(stream.completion.values, ['stdout', 'stderr']);
        const order = await client.complete(template(WIKI, 'order'));
        assert.deepEqual(order.completion.values, ['asc', 'desc']);
        const status = await client.complete(template(RUNS, 'status'));
        assert.deepEqual(status.completion.values, ['0', '1', '2', '3', '4', '5', '6', '7', '8']);
      });
    });

    test('prompt arguments complete like the tool fields they stand for', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const prompt = (name: string, argument: string, value: string, context?: Record<string, string>) =>
          client.complete({
            ref: { type: 'ref/prompt', name },
            argument: { name: argument, value },
            ...(context ? { context: { arguments: context } } : {}),
          });
        assert.deepEqual((await prompt('why_did_run_fail', 'name', 'fa')).completion.values, ['fails']);
        assert.deepEqual(
          (await prompt('why_did_run_fail', 'dagRunId', '', { name: on.dagu.seed.dags.fails })).completion
            .values,
          ['latest', on.dagu.seed.runs.fails],
        );
        assert.deepEqual((await prompt('compare_runs', 'count', '')).completion.values, [
          '3',
          '5',
          '10',
          '20',
        ]);
        assert.deepEqual((await prompt('compare_runs', 'count', '1')).completion.values, ['10']);
        // Unknown prompts, arguments and templates have nothing to suggest (the conformance suite asks
        // for its own test_prompt_with_arguments).
        assert.deepEqual((await prompt('test_prompt_with_arguments', 'arg1', 'test')).completion, {
          values: [],
          total: 0,
          hasMore: false,
        });
        assert.deepEqual((await prompt('summarize_dag', 'nope', '')).completion.values, []);
        assert.deepEqual(
          (await client.complete(template('test://template/{id}/data', 'id'))).completion.values,
          [],
        );
      });
    });

    test('the allowlist filters completions exactly as it filters reads', async () => {
      await withKey(era, SCOPED_KEY, async (client) => {
        const { runs, dags } = on.dagu.seed;
        assert.deepEqual((await client.complete(template(SPEC, 'name'))).completion, {
          values: ['two-steps'],
          total: 1,
          hasMore: false,
        });
        assert.deepEqual((await client.complete(template(SPEC, 'name', 'fa'))).completion.values, []);
        // Another DAG's runs, steps and sub runs: nothing, the same as a DAG that does not exist.
        for (const params of [
          template(RUN, 'dagRunId', '', { name: dags.fails }),
          template(STEP_LOG, 'stepName', '', { name: dags.fails, dagRunId: runs.fails }),
          template(SUB, 'subRunId', '', { name: dags.parent, dagRunId: runs.parent }),
        ]) {
          assert.deepEqual((await client.complete(params)).completion, {
            values: [],
            total: 0,
            hasMore: false,
          });
          const read = await client.callTool({
            target: 'run',
            name: params.context?.arguments?.name,
            dagRunId: params.context?.arguments?.dagRunId ?? 'latest',
          });
          assert.equal(read.structuredContent?.code, 'unauthorized', 'and the read is refused');
        }
        const own = await client.complete(template(RUN, 'dagRunId', '', { name: dags.twoSteps }));
        assert.equal(own.completion.values.length, 3);
        // workspaces: [ops, default], offered as granted (the seed's DAGs are unlabelled: in `default`).
        const workspaces = (await client.complete(template(WIKI, 'workspace'))).completion.values;
        assert.deepEqual(workspaces, ['default', 'ops']);
        if (on.dagu.generation === 2) {
          const hidden = await client.complete(template(WIKI_PAGE, 'path', '', { workspace: 'data' }));
          assert.deepEqual(hidden.completion.values, [], "another workspace's pages");
        }
      });
    });
  });
}

describe('completion/complete is metered and audited like a tool call', () => {
  test('audit lines name the method, the caller and the outcome', async () => {
    await withKey('legacy', SCOPED_KEY, async (client) => {
      await client.complete(template(SPEC, 'name', 'tw'));
    });
    const line = on.gateway
      .auditLines()
      .filter((entry) => entry.event === 'mcp.completion')
      .at(-1);
    assert.ok(line, 'an mcp.completion audit line');
    assert.equal(line.method, 'completion/complete');
    assert.equal(line.identity, 'two-only');
    assert.equal(line.outcome, 'ok');
    assert.equal(line.target, 'dags');
  });

  test('the per-identity rate limit counts completions (429 past the budget)', async () => {
    const limited = await startCapturedGateway({
      DAGU_URL: on.dagu.url,
      DAGU_API_BASE: on.dagu.apiBase,
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'limited', key: LIMITED_KEY }]),
      RATE_LIMIT_PER_MINUTE: '2',
    });
    try {
      const refused = (error: unknown) => {
        const { status, body } = httpFailure(error);
        assert.equal(status, 429, String(error));
        assert.equal(body.code, 'rate_limited');
        return true;
      };
      const modern = await CONNECTORS.modern(limited.mcpUrl, bearer(LIMITED_KEY));
      const legacy = await CONNECTORS.legacy(limited.mcpUrl, bearer(LIMITED_KEY));
      try {
        await modern.complete(template(SPEC, 'name', 't'));
        await legacy.complete(template(SPEC, 'name', 't'));
        // The budget is per identity, whichever client spends it.
        await assert.rejects(modern.complete(template(SPEC, 'name', 't')), refused);
        await assert.rejects(legacy.complete(template(SPEC, 'name', 't')), refused);
      } finally {
        await modern.close();
        await legacy.close();
      }
    } finally {
      await limited.close();
    }
  });

  test('Dagu unreachable: a JSON-RPC error with the contract error object, not an empty list', async () => {
    const down = await startCapturedGateway({
      DAGU_URL: 'http://127.0.0.1:9',
      DAGU_API_BASE: on.dagu.apiBase,
      DAGU_TIMEOUT_MS: '500',
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'full', key: FULL_KEY }]),
    });
    try {
      for (const era of ['modern', 'legacy'] as const) {
        const client = await CONNECTORS[era](down.mcpUrl, bearer(FULL_KEY));
        try {
          await assert.rejects(client.complete(template(SPEC, 'name')), (error: unknown) => {
            const { code, data } = error as { code?: number; data?: { code?: string } };
            assert.equal(code, -32603, String(error));
            assert.equal(data?.code, 'resource_unavailable');
            return true;
          });
        } finally {
          await client.close();
        }
      }
      assert.equal(
        down
          .auditLines()
          .filter((entry) => entry.event === 'mcp.completion')
          .at(-1)?.outcome,
        'resource_unavailable',
      );
    } finally {
      await down.close();
    }
  });
});

describe('at most 100 values, with hasMore and total as the protocol says', () => {
  test('a Dagu with 210 DAGs: 100 values; total when every match was seen, hasMore either way', async () => {
    const many = await startDagu();
    const names = [
      ...Array.from({ length: 150 }, (_, i) => `bulk-a-${String(i).padStart(3, '0')}`),
      ...Array.from({ length: 60 }, (_, i) => `bulk-b-${String(i).padStart(2, '0')}`),
    ];
    for (const name of names) {
      writeFileSync(join(many.home, 'dags', `${name}.yaml`), 'steps:\n  - name: s\n    command: echo hi\n');
    }
    const local = await startCapturedGateway({ DAGU_URL: many.url, DAGU_API_BASE: many.apiBase });
    try {
      for (const era of ['modern', 'legacy'] as const) {
        const client = await CONNECTORS[era](local.mcpUrl);
        try {
          const a = (await client.complete(template(SPEC, 'name', 'bulk-a'))).completion;
          assert.deepEqual(a.values, names.slice(0, 100), era);
          assert.equal(a.total, 150);
          assert.equal(a.hasMore, true);
          // More DAGs than one Dagu page (200): more exist, how many is not known.
          const all = (await client.complete(template(SPEC, 'name'))).completion;
          assert.equal(all.values.length, 100);
          assert.equal(all.total, undefined);
          assert.equal(all.hasMore, true);
          assert.deepEqual((await client.complete(template(SPEC, 'name', 'bulk-b'))).completion, {
            values: names.slice(150),
            total: 60,
            hasMore: false,
          });
        } finally {
          await client.close();
        }
      }
    } finally {
      await local.close();
      await many.stop();
    }
  });
});
