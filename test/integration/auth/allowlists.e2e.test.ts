// DAG allowlists end to end against the seeded Dagu: an API key with `dags: ['two-*']` and a JWT with a
// `dags` claim see only matching DAGs in the collections, and get the tool error `unauthorized` (with
// `target` and `uri`) for another DAG's spec, run, run logs and step log; both MCP clients.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, claims, hs256, newApiKey, newSecret, writeKeysFile } from '../../support/auth-fixtures.ts';
import { CONNECTORS, type TestClient, type ToolResult } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const SECRET = newSecret();
const SCOPED_KEY = newApiKey('scoped');

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'two-only', key: SCOPED_KEY, dags: ['two-*'] }]),
  AUTH_JWT_SECRET: SECRET,
}));

const matches = (name: string) => name.startsWith('two-');

function assertUnauthorized(result: ToolResult, target: string, uri: string | undefined, label: string) {
  assert.equal(result.isError, true, label);
  const error = result.structuredContent!;
  assert.equal(error.code, 'unauthorized', `${label}: ${JSON.stringify(error)}`);
  assert.equal(error.target, target, label);
  assert.equal(error.uri, uri, label);
  assert.equal(typeof error.message, 'string');
  // Nothing about the refused DAG's content comes back.
  assert.equal(error.details, undefined, label);
}

const identities = () =>
  [
    ['API key with dags: [two-*]', SCOPED_KEY, 'two-only'],
    [
      'JWT with a dags claim',
      hs256(claims('scoped-user', { dags: ['two-*'], role: 'viewer' }), SECRET),
      'scoped-user',
    ],
  ] as const;

for (const era of ['modern', 'legacy'] as const) {
  for (const [label, token, identity] of identities()) {
    describe(`${label}, ${era} client`, () => {
      let client: TestClient;
      before(async () => {
        client = await CONNECTORS[era](on.gateway.mcpUrl, bearer(token));
      });
      after(() => client?.close());

      test('dags lists only matching DAGs', async () => {
        const result = await client.callTool({ target: 'dags', query: 'perPage=200' });
        assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
        const data = result.structuredContent!.data as {
          items: Array<{ name: string }>;
          pagination: { totalRecords: number };
        };
        const names = data.items.map((item) => item.name);
        assert.deepEqual(names, [on.dagu.seed.dags.twoSteps]);
        assert.equal(data.pagination.totalRecords, 1);
        // The unrestricted list is larger: the filter did something.
        assert.ok(Object.values(on.dagu.seed.dags).filter((name) => !matches(name)).length > 0);
      });

      test('runs lists only runs of matching DAGs, also when another DAG is asked for by name', async () => {
        const all = await client.callTool({ target: 'runs' });
        assert.notEqual(all.isError, true, JSON.stringify(all.structuredContent));
        const items = (all.structuredContent!.data as { items: Array<{ name: string; dagRunId: string }> })
          .items;
        assert.ok(items.length >= 2);
        assert.ok(
          items.every((item) => matches(item.name)),
          JSON.stringify(items.map((item) => item.name)),
        );
        const ids = items.map((item) => item.dagRunId);
        assert.ok(
          ids.includes(on.dagu.seed.runs.twoStepsFirst) && ids.includes(on.dagu.seed.runs.twoStepsSecond),
        );

        const other = await client.callTool({ target: 'runs', query: `name=${on.dagu.seed.dags.fails}` });
        assert.notEqual(other.isError, true);
        assert.deepEqual((other.structuredContent!.data as { items: unknown[] }).items, []);
      });

      test('a matching DAG reads normally', async () => {
        const spec = await client.callTool({ target: 'dag_spec', name: on.dagu.seed.dags.twoSteps });
        assert.notEqual(spec.isError, true, JSON.stringify(spec.structuredContent));
        const log = await client.callTool({
          target: 'step_log',
          name: on.dagu.seed.dags.twoSteps,
          dagRunId: on.dagu.seed.runs.twoStepsFirst,
          stepName: on.dagu.seed.facts.twoStepsStepNames[0],
        });
        assert.notEqual(log.isError, true, JSON.stringify(log.structuredContent));
      });

      test('dag_spec, run, run_logs and step_log of another DAG are unauthorized, in target and URI mode', async () => {
        const name = on.dagu.seed.dags.fails;
        const id = on.dagu.seed.runs.fails;
        const step = on.dagu.seed.facts.failsStepName;
        // `dag` has no resource URI in the contract: its error carries `target` only.
        const cases: Array<[Record<string, unknown>, string, string | undefined]> = [
          [{ target: 'dag_spec', name }, 'dag_spec', `dagu://dags/${name}/spec`],
          [{ target: 'dag', name }, 'dag', undefined],
          [{ target: 'run', name, dagRunId: id }, 'run', `dagu://runs/${name}/${id}`],
          [{ target: 'run_logs', name, dagRunId: id }, 'run_logs', `dagu://runs/${name}/${id}/logs`],
          [
            { target: 'step_log', name, dagRunId: id, stepName: step },
            'step_log',
            `dagu://runs/${name}/${id}/steps/${step}/logs`,
          ],
          // A DAG that does not exist is refused the same way: no existence oracle.
          [{ target: 'dag_spec', name: 'no-such-dag' }, 'dag_spec', 'dagu://dags/no-such-dag/spec'],
        ];
        for (const [args, target, uri] of cases) {
          assertUnauthorized(await client.callTool(args), target, uri, JSON.stringify(args));
          if (uri !== undefined) assertUnauthorized(await client.callTool({ uri }), target, uri, uri);
          const record = on.gateway.auditLines().at(-1)!;
          assert.deepEqual(
            [record.identity, record.target, record.outcome],
            [identity, target, 'unauthorized'],
          );
        }
      });

      test('resources/read of another DAG is a JSON-RPC error carrying unauthorized', async () => {
        const uri = `dagu://dags/${on.dagu.seed.dags.fails}/spec`;
        await assert.rejects(client.readResource(uri), (error: unknown) => {
          const data = (error as { data?: Record<string, unknown> }).data;
          assert.equal(data?.code, 'unauthorized', String(error));
          assert.equal(data?.resourceUri, uri);
          return true;
        });
      });
    });
  }
}

test("a sub run is unauthorized when its own DAG is outside the allowlist, though the parent's is inside", async () => {
  const token = hs256(claims('parent-only', { dags: [on.dagu.seed.dags.parent] }), SECRET);
  const client = await CONNECTORS.modern(on.gateway.mcpUrl, bearer(token));
  try {
    const name = on.dagu.seed.dags.parent;
    const root = on.dagu.seed.runs.parent;
    const parentRun = await client.callTool({ target: 'run', name, dagRunId: root });
    assert.notEqual(parentRun.isError, true, JSON.stringify(parentRun.structuredContent));
    const sub = await client.callTool({
      target: 'run',
      name,
      dagRunId: root,
      subRunId: on.dagu.seed.runs.childSub,
    });
    assertUnauthorized(
      sub,
      'run',
      `dagu://runs/${name}/${root}/sub/${on.dagu.seed.runs.childSub}`,
      'sub run',
    );
  } finally {
    await client.close();
  }
});

test('an empty dags claim allows no DAG at all', async () => {
  const token = hs256(claims('nothing', { dags: [] }), SECRET);
  const client = await CONNECTORS.legacy(on.gateway.mcpUrl, bearer(token));
  try {
    const list = await client.callTool({ target: 'dags' });
    assert.deepEqual((list.structuredContent!.data as { items: unknown[] }).items, []);
    const spec = await client.callTool({ target: 'dag_spec', name: on.dagu.seed.dags.twoSteps });
    assert.equal(spec.structuredContent?.code, 'unauthorized');
  } finally {
    await client.close();
  }
});
