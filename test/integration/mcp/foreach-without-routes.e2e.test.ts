// Foreach reads on real Daguen without foreach REST routes (Dagu v2.15.1 and every 1.x), through a
// real MCP client (issue 12 item 4): what the request names is established first from the run details
// Dagu does serve. An unknown run or step, or a step that is not a foreach step, is resource_not_found
// with the request's URI; only a real foreach step (v2.15.1: `executorConfig.type: "foreach"`) is
// resource_unavailable, naming what this Dagu cannot give.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skipUnlessCI } from '../../support/ci.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const on = gatewayOnTestDagu(undefined, { client: true });

const esc = encodeURIComponent;

async function failure(args: Record<string, unknown>) {
  const result = await on.client.callTool(args);
  assert.equal(result.isError, true, JSON.stringify(args));
  return result.structuredContent as { code: string; message: string; uri?: string; target?: string };
}

/** The three foreach reads of one step, with the URIs the contract gives them. */
function foreachReads(name: string, dagRunId: string, stepName: string) {
  const base = `dagu://runs/${esc(name)}/${esc(dagRunId)}/steps/${esc(stepName)}/foreach`;
  const fields = { name, dagRunId, stepName };
  return [
    { args: { target: 'foreach_items', ...fields }, uri: base },
    { args: { target: 'foreach_item', ...fields, item: '0' }, uri: `${base}/0` },
    {
      args: { target: 'step_log', ...fields, item: '0', bodyStepName: 'body' },
      uri: `${base}/0/steps/body/logs`,
    },
  ];
}

test('a real foreach step on Dagu v2.15.1: resource_unavailable naming the per-item state it lacks', async (t) => {
  const v2 = on.dagu.seed.v2;
  if (on.dagu.generation !== 2 || v2 === undefined)
    return t.skip(skipUnlessCI('Dagu 1.x has no foreach steps (next test)'));
  const name = on.dagu.seed.dags.foreach ?? '';
  for (const { args, uri } of foreachReads(name, v2.runs.foreach, v2.foreach.stepName)) {
    const error = await failure(args);
    assert.equal(error.code, 'resource_unavailable', JSON.stringify(error));
    assert.equal(error.uri, uri);
    assert.match(
      error.message,
      /is a foreach step, but the connected Dagu does not serve its per-item state/,
    );
  }
});

test('an unknown run, an unknown step, or a step that is not a foreach step is resource_not_found with the URI', async () => {
  const { dags, runs } = on.dagu.seed;
  const v2 = on.dagu.seed.v2;
  const [name, dagRunId, plainStep] =
    on.dagu.generation === 2 && v2 !== undefined
      ? [dags.foreach ?? '', v2.runs.foreach, 'summary']
      : [dags.fails, runs.fails, 'boom'];
  const cases = [
    ...foreachReads(name, 'no-such-run', plainStep),
    ...foreachReads(name, dagRunId, 'no such step'),
    ...foreachReads(name, dagRunId, plainStep),
  ];
  for (const { args, uri } of cases) {
    const error = await failure(args);
    assert.equal(error.code, 'resource_not_found', `${JSON.stringify(args)} → ${JSON.stringify(error)}`);
    assert.equal(error.uri, uri);
  }
  const plain = await failure(foreachReads(name, dagRunId, plainStep)[0]?.args ?? {});
  assert.match(plain.message, /is not a foreach step/);
});
