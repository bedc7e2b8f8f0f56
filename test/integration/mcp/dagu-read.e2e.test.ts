// dagu_read end to end: real MCP clients (v2 modern, v1 legacy) over real HTTP to the real gateway,
// which reads the real, seeded Dagu.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { daguApi, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { CONNECTORS, type RunningGateway, startGateway, type TestClient } from '../../support/gateway.ts';

const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let dagu: TestDagu;
let gateway: RunningGateway;

before(async () => {
  dagu = await getTestDagu();
  gateway = await startGateway({ DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase });
});
after(async () => {
  await gateway?.close();
  await dagu?.stop();
});

/** Counts of DAGs and runs, to prove reads change nothing. */
async function daguState(): Promise<{ dags: number; runs: number }> {
  const dags = (await daguApi(dagu, '/dags?perPage=200')).body as { dags: unknown[] };
  const runs = (await daguApi(dagu, '/dag-runs')).body as { dagRuns: unknown[] };
  return { dags: dags.dags.length, runs: runs.dagRuns.length };
}

function assertSuccessEnvelope(result: Awaited<ReturnType<TestClient['callTool']>>, target: string) {
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  const envelope = result.structuredContent!;
  assert.equal(envelope.target, target);
  assert.deepEqual([...(envelope.references as string[])].sort(), [...REFERENCES].sort());
  assert.equal(typeof envelope.data, 'object');
  const first = result.content[0]!;
  assert.equal(first.type, 'text');
  if (envelope.uri === undefined) {
    assert.equal(result.content.length, 1);
  } else {
    assert.equal(result.content.length, 2);
    assert.equal(result.content[1]!.type, 'resource_link');
    assert.equal(result.content[1]!.uri, envelope.uri);
  }
  return envelope as { target: string; uri?: string; data: Record<string, unknown>; [key: string]: unknown };
}

for (const era of ['modern', 'legacy'] as const) {
  describe(`dagu_read through the ${era} MCP client`, () => {
    let client: TestClient;
    before(async () => {
      client = await CONNECTORS[era](gateway.mcpUrl);
    });
    after(async () => {
      await client?.close();
    });

    test('tools/list advertises dagu_read with schemas and read-only annotations', async () => {
      const { tools } = await client.listTools();
      const tool = tools.find((candidate) => candidate.name === 'dagu_read');
      assert.ok(tool, 'dagu_read is listed');
      const annotations = tool.annotations as Record<string, unknown>;
      assert.equal(annotations.readOnlyHint, true);
      assert.equal(annotations.openWorldHint, false);
      const input = tool.inputSchema as {
        properties: Record<string, unknown>;
        additionalProperties: unknown;
      };
      assert.equal(input.additionalProperties, false);
      for (const field of ['target', 'uri', 'name', 'dagRunId', 'query', 'limit', 'password']) {
        assert.ok(field in input.properties, `input schema has ${field}`);
      }
      assert.ok(tool.outputSchema, 'output schema declared');
    });

    test('references and the default reference topic', async () => {
      const list = assertSuccessEnvelope(await client.callTool({ target: 'references' }), 'references');
      assert.equal(list.uri, undefined);
      const names = (list.data.items as Array<{ name: string; uri: string; mimeType: string }>).map(
        (i) => i.name,
      );
      for (const topic of [
        'authoring',
        'tools',
        'read-tool',
        'change-tool',
        'execute-tool',
        'notifications',
      ]) {
        assert.ok(names.includes(topic), topic);
      }
      const topic = assertSuccessEnvelope(await client.callTool({ target: 'reference' }), 'reference');
      assert.equal(topic.uri, 'dagu://reference/authoring');
      assert.equal(topic.data.mimeType, 'text/markdown');
      assert.match(topic.data.text as string, /^# Dagu DAG authoring/);
      const viaUri = await client.callTool({ uri: 'dagu://reference' });
      assert.equal(assertSuccessEnvelope(viaUri, 'references').uri, 'dagu://reference');
    });

    test('dags: items, pagination, and the success text carries the JSON of data', async () => {
      const result = await client.callTool({ target: 'dags', query: 'perPage=200' });
      const envelope = assertSuccessEnvelope(result, 'dags');
      const items = envelope.data.items as Array<{ name: string; uri: string; suspended: boolean }>;
      const names = items.map((item) => item.name);
      for (const seeded of Object.values(dagu.seed.dags)) assert.ok(names.includes(seeded), seeded);
      const dotted = items.find((item) => item.name === dagu.seed.dags.dotted);
      assert.deepEqual(
        { uri: dotted?.uri, suspended: dotted?.suspended },
        { uri: `dagu://dags/${dagu.seed.dags.dotted}/spec`, suspended: false },
      );
      assert.equal(typeof envelope.data.pagination, 'object');
      const text = result.content[0]!.text as string;
      assert.ok(text.startsWith('Dagu read completed.\n\n'));
      assert.deepEqual(JSON.parse(text.slice('Dagu read completed.\n\n'.length)), envelope.data);
    });

    test('dag: latestRun once the DAG has run, none before', async () => {
      const ran = assertSuccessEnvelope(
        await client.callTool({ target: 'dag', name: dagu.seed.dags.fails }),
        'dag',
      );
      assert.equal(ran.data.name, dagu.seed.dags.fails);
      assert.equal(ran.data.specUri, `dagu://dags/${dagu.seed.dags.fails}/spec`);
      assert.equal(ran.data.suspended, false);
      assert.deepEqual(ran.data.latestRun, {
        ...(ran.data.latestRun as object),
        dagRunId: dagu.seed.runs.fails,
        status: 2,
        statusLabel: 'failed',
      });
      const never = assertSuccessEnvelope(
        await client.callTool({ target: 'dag', name: dagu.seed.dags.neverRan }),
        'dag',
      );
      assert.equal(never.data.latestRun, undefined);
    });

    test('dag_spec: YAML and an errors array', async () => {
      const spec = assertSuccessEnvelope(
        await client.callTool({ uri: `dagu://dags/${dagu.seed.dags.dotted}/spec` }),
        'dag_spec',
      );
      assert.equal(spec.uri, `dagu://dags/${dagu.seed.dags.dotted}/spec`);
      assert.equal(spec.data.mimeType, 'application/yaml');
      assert.match(spec.data.spec as string, /steps:/);
      assert.deepEqual(spec.data.errors, []);
    });

    test('runs: items with canonical URIs and millisecond UTC timestamps', async () => {
      const runs = assertSuccessEnvelope(
        await client.callTool({ target: 'runs', query: `name=${dagu.seed.dags.twoSteps}` }),
        'runs',
      );
      const items = runs.data.items as Array<Record<string, unknown>>;
      assert.ok(items.length >= 2);
      for (const item of items) {
        assert.equal(item.name, dagu.seed.dags.twoSteps);
        assert.equal(item.uri, `dagu://runs/${item.name}/${item.dagRunId}`);
        assert.equal(item.status, 4);
        assert.equal(item.statusLabel, 'succeeded');
        assert.match(item.startedAt as string, RFC3339_MS);
        assert.match(item.finishedAt as string, RFC3339_MS);
      }
    });

    test('run: root run with steps, log URIs and the failed step error', async () => {
      const { fails } = dagu.seed.runs;
      const name = dagu.seed.dags.fails;
      const run = assertSuccessEnvelope(
        await client.callTool({ target: 'run', name, dagRunId: fails }),
        'run',
      );
      assert.equal(run.uri, `dagu://runs/${name}/${fails}`);
      assert.equal(run.data.uri, `dagu://runs/${name}/${fails}`);
      assert.equal(run.data.logsUri, `dagu://runs/${name}/${fails}/logs`);
      assert.equal(run.data.status, 2);
      assert.equal(run.data.statusLabel, 'failed');
      const [step] = run.data.steps as Array<Record<string, unknown>>;
      assert.equal(step?.name, dagu.seed.facts.failsStepName);
      assert.equal(step?.logUri, `dagu://runs/${name}/${fails}/steps/${dagu.seed.facts.failsStepName}/logs`);
      assert.equal(typeof step?.error, 'string');
      assert.ok(!String(step?.error).includes(dagu.home), 'no absolute Dagu path leaks');
    });

    test('run: sub run addressed under its root, without logsUri', async () => {
      const name = dagu.seed.dags.parent;
      const root = dagu.seed.runs.parent;
      const sub = dagu.seed.runs.childSub;
      const run = assertSuccessEnvelope(
        await client.callTool({ target: 'run', name, dagRunId: root, subRunId: sub }),
        'run',
      );
      assert.equal(run.uri, `dagu://runs/${name}/${root}/sub/${sub}`);
      assert.equal(run.data.name, dagu.seed.dags.child);
      assert.equal(run.data.dagRunId, sub);
      assert.equal(run.data.logsUri, undefined);
      const [step] = run.data.steps as Array<Record<string, unknown>>;
      assert.match(step?.logUri as string, new RegExp(`^dagu://runs/${name}/${root}/sub/${sub}/steps/`));
    });

    test('run_logs: scheduler log and per-step stream flags; the query is echoed in the uri', async () => {
      const name = dagu.seed.dags.twoSteps;
      const id = dagu.seed.runs.twoStepsFirst;
      const logs = assertSuccessEnvelope(
        await client.callTool({ target: 'run_logs', name, dagRunId: id, query: 'tail=100' }),
        'run_logs',
      );
      assert.equal(logs.uri, `dagu://runs/${name}/${id}/logs?tail=100`);
      const scheduler = logs.data.schedulerLog as Record<string, unknown>;
      assert.equal(typeof scheduler.content, 'string');
      assert.equal(typeof scheduler.lineCount, 'number');
      assert.equal(typeof scheduler.hasMore, 'boolean');
      const steps = logs.data.stepLogs as Array<Record<string, unknown>>;
      assert.deepEqual(
        steps.map((step) => step.stepName),
        dagu.seed.facts.twoStepsStepNames,
      );
      assert.ok(steps.every((step) => step.hasStdout === true && typeof step.hasStderr === 'boolean'));
    });

    test('step_log echoes its address and reads stdout and stderr', async () => {
      const name = dagu.seed.dags.twoSteps;
      const id = dagu.seed.runs.twoStepsFirst;
      const stepName = dagu.seed.facts.twoStepsStepNames[0];
      const log = assertSuccessEnvelope(
        await client.callTool({ target: 'step_log', name, dagRunId: id, stepName }),
        'step_log',
      );
      assert.equal(log.name, name);
      assert.equal(log.dagRunId, id);
      assert.equal(log.stepName, stepName);
      assert.equal(log.uri, `dagu://runs/${name}/${id}/steps/${encodeURIComponent(stepName)}/logs`);
      assert.notEqual(log.data.stdoutContent, '');
      assert.equal(typeof log.data.stderrContent, 'string');
    });

    test('bad input gets the contract error object, never a protocol error', async () => {
      const cases: Array<[unknown, string, string | undefined]> = [
        ['a string', 'invalid_tool_input', undefined],
        [[1, 2], 'invalid_tool_input', undefined],
        [{ target: 'dags', bogus: 1 }, 'invalid_tool_input', 'bogus'],
        [{ target: 5 }, 'invalid_tool_input', 'target'],
        [{ target: 'nope' }, 'unsupported_read_target', undefined],
        [{ uri: 'dagu://reference/authoring', target: 'reference' }, 'invalid_tool_input', undefined],
        [{ target: 'run_logs', name: 'x' }, 'invalid_tool_input', 'dagRunId'],
        [{ uri: 'https://example.com/x' }, 'invalid_resource_uri', 'uri'],
        [{ uri: 'dagu://elsewhere/x' }, 'unsupported_resource', undefined],
        [{ target: 'dags', query: 'perPage=201' }, 'invalid_tool_input', 'query'],
      ];
      for (const [args, code, field] of cases) {
        const result = await client.callTool(args);
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.equal(result.structuredContent?.code, code, JSON.stringify(args));
        if (field !== undefined) assert.equal(result.structuredContent?.field, field, JSON.stringify(args));
        assert.equal(typeof result.structuredContent?.message, 'string');
      }
    });

    test('an unknown DAG is resource_not_found with close names', async () => {
      const result = await client.callTool({ target: 'dag_spec', name: 'two-step' });
      assert.equal(result.isError, true);
      const error = result.structuredContent!;
      assert.equal(error.code, 'resource_not_found');
      assert.equal(error.target, 'dag_spec');
      assert.equal(error.uri, 'dagu://dags/two-step/spec');
      assert.ok(
        ((error.details as { didYouMean: string[] }).didYouMean ?? []).includes(dagu.seed.dags.twoSteps),
      );
    });

    test('a not-found found by a target handler names the target and the resolved uri', async () => {
      const { fails } = dagu.seed.runs;
      const step = await client.callTool({
        target: 'step_log',
        name: 'fails',
        dagRunId: fails,
        stepName: 'no such',
      });
      const error = step.structuredContent!;
      assert.deepEqual(
        { code: error.code, target: error.target, uri: error.uri },
        {
          code: 'resource_not_found',
          target: 'step_log',
          uri: `dagu://runs/fails/${fails}/steps/no%20such/logs`,
        },
      );
    });

    test('resources: list, templates, and reads with the link table MIME types', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((resource) => resource.uri);
      for (const uri of [
        'dagu://reference',
        'dagu://dags',
        'dagu://runs',
        'dagu://wiki',
        'dagu://reference/tools',
      ]) {
        assert.ok(uris.includes(uri), uri);
      }
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(resourceTemplates.some((template) => template.uriTemplate === 'dagu://dags/{name}/spec'));
      const spec = await client.readResource(`dagu://dags/${dagu.seed.dags.dotted}/spec`);
      assert.equal(spec.contents[0]?.mimeType, 'application/yaml');
      assert.match(spec.contents[0]?.text ?? '', /steps:/);
      const run = await client.readResource(`dagu://runs/${dagu.seed.dags.fails}/${dagu.seed.runs.fails}`);
      assert.equal(run.contents[0]?.mimeType, 'application/json');
      assert.equal(JSON.parse(run.contents[0]?.text ?? '{}').statusLabel, 'failed');
      const topic = await client.readResource('dagu://reference/tools');
      assert.equal(topic.contents[0]?.mimeType, 'text/markdown');
      assert.match(topic.contents[0]?.text ?? '', /dagu_read/);
    });

    test('a failed resources/read is a JSON-RPC error carrying the contract error object', async () => {
      await assert.rejects(client.readResource('dagu://dags/no-such-dag/spec'), (error: unknown) => {
        const data = (error as { data?: Record<string, unknown> }).data;
        assert.equal(data?.code, 'resource_not_found');
        assert.equal(data?.resourceUri, 'dagu://dags/no-such-dag/spec');
        assert.equal(typeof data?.message, 'string');
        return true;
      });
    });
  });
}

test('reads never change Dagu state', async () => {
  const before = await daguState();
  const client = await CONNECTORS.modern(gateway.mcpUrl);
  try {
    for (const args of [
      { target: 'dags' },
      { target: 'runs' },
      { target: 'dag', name: dagu.seed.dags.fails },
      { target: 'run', name: dagu.seed.dags.fails, dagRunId: 'latest' },
      { target: 'run_logs', name: dagu.seed.dags.fails, dagRunId: dagu.seed.runs.fails },
    ]) {
      assertSuccessEnvelope(await client.callTool(args), args.target);
    }
  } finally {
    await client.close();
  }
  assert.deepEqual(await daguState(), before);
});

test('GET and DELETE on the MCP endpoint answer 405', async () => {
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(gateway.mcpUrl, { method });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  }
});
