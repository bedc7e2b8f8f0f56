/**
 * step_log (and the generation-1 answers of the foreach targets) against the real, seeded Dagu:
 * raw tool input goes through the real input layer, the handler gets the real Dagu client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';
import { createDaguClient } from '../../../src/dagu/client.ts';
import type { DaguClient } from '../../../src/dagu/types.ts';
import { ReadError } from '../../../src/read/errors.ts';
import { resolveReadInput } from '../../../src/read/input/index.ts';
import { foreachTargets } from '../../../src/read/targets/foreach.ts';
import { handlersOf } from '../../../src/read/targets/index.ts';
import { stepLogTargets } from '../../../src/read/targets/step-log.ts';
import type { ResolvedRead } from '../../../src/read/types.ts';
import { daguApi, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { depsOf } from '../../support/read-deps.ts';

const HANDLERS = handlersOf({ ...stepLogTargets, ...foreachTargets });

type Data = Record<string, unknown>;

let dagu: TestDagu;
let client: DaguClient;

async function read(
  input: Record<string, unknown>,
  access: AccessPolicy = UNRESTRICTED_ACCESS,
): Promise<{ data: Data; request: ResolvedRead }> {
  const request = resolveReadInput(input);
  const handler = HANDLERS[request.target];
  if (handler === undefined) throw new Error(`no handler for ${request.target}`);
  const result = await handler(request, depsOf(client), { access });
  return { data: result.data, request };
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

const lines = (content: unknown) => String(content).split('\n');

before(async () => {
  dagu = await getTestDagu();
  client = createDaguClient({ url: dagu.url, apiBase: dagu.apiBase, token: dagu.token, timeoutMs: 10_000 });
});

after(async () => {
  await client.close();
  await dagu.stop();
});

describe('step_log against the real Dagu', () => {
  const stepLog = (fields: Record<string, unknown>) => ({ target: 'step_log', ...fields });

  test('root run, step name with a space: both streams, counters of stdout', async () => {
    const { runs, dags, facts } = dagu.seed;
    const { data, request } = await read(
      stepLog({ name: dags.twoSteps, dagRunId: runs.twoStepsFirst, stepName: facts.twoStepsStepNames[0] }),
    );
    assert.equal(request.uri, `dagu://runs/${dags.twoSteps}/${runs.twoStepsFirst}/steps/step%20one/logs`);
    assert.deepEqual(data, {
      stdoutContent: 'hello from step one',
      stderrContent: 'warning from step one',
      lineCount: 1,
      totalLines: 1,
      hasMore: false,
      isEstimate: false,
    });
  });

  test('dagRunId latest reads the newest run, as the run target does', async () => {
    const { dags, facts } = dagu.seed;
    const { data, request } = await read(
      stepLog({ name: dags.twoSteps, dagRunId: 'latest', stepName: facts.twoStepsStepNames[0] }),
    );
    assert.equal(request.uri, `dagu://runs/${dags.twoSteps}/latest/steps/step%20one/logs`);
    assert.equal(data.stdoutContent, 'hello from step one');
  });

  test('stream=stdout and stream=stderr read one stream; the other content is empty', async () => {
    const { runs, dags, facts } = dagu.seed;
    const base = { name: dags.fails, dagRunId: runs.fails, stepName: facts.failsStepName };
    const stdout = await read(stepLog({ ...base, query: 'stream=stdout' }));
    assert.equal(stdout.data.stdoutContent, 'about to fail');
    assert.equal(stdout.data.stderrContent, '');
    assert.equal(stdout.data.lineCount, 1);
    const stderr = await read(stepLog({ ...base, query: 'stream=stderr' }));
    assert.equal(stderr.data.stdoutContent, '');
    assert.equal(stderr.data.stderrContent, facts.failsStderr);
    assert.equal(stderr.data.totalLines, 1);
  });

  test('no positioning reads the LAST 1000 lines (Dagu alone would send the first 1000)', async () => {
    const { runs, dags } = dagu.seed;
    const { data } = await read(
      stepLog({ name: dags.manyLines, dagRunId: runs.manyLines, stepName: 'count' }),
    );
    const content = lines(data.stdoutContent);
    assert.equal(content.length, 1000);
    assert.equal(content[0], '2001');
    assert.equal(content.at(-1), '3000');
    assert.equal(data.lineCount, 1000);
    assert.equal(data.hasMore, true);
    assert.equal(data.stderrContent, '');
    // seq 1 3000 is over 10 KB: Dagu estimates the total and says so.
    assert.equal(data.isEstimate, true);
    assert.equal(typeof data.totalLines, 'number');
  });

  test('tail, head, offset+limit and limit alone are forwarded to Dagu', async () => {
    const { runs, dags } = dagu.seed;
    const base = { name: dags.manyLines, dagRunId: runs.manyLines, stepName: 'count' };
    const tail = await read(stepLog({ ...base, query: 'tail=3' }));
    assert.deepEqual(lines(tail.data.stdoutContent), ['2998', '2999', '3000']);
    assert.equal(tail.data.lineCount, 3);
    const head = await read(stepLog({ ...base, query: 'head=2&stream=stdout' }));
    assert.deepEqual(lines(head.data.stdoutContent), ['1', '2']);
    assert.equal(head.data.hasMore, true);
    const range = await read(stepLog({ ...base, query: 'offset=10&limit=3' }));
    assert.deepEqual(lines(range.data.stdoutContent), ['10', '11', '12']);
    const limit = await read(stepLog({ ...base, query: 'limit=2' }));
    assert.deepEqual(lines(limit.data.stdoutContent), ['1', '2']);
  });

  test('sub run: the child step log under /sub/{subRunId}', async () => {
    const { runs, dags } = dagu.seed;
    const { data, request } = await read(
      stepLog({ name: dags.parent, dagRunId: runs.parent, subRunId: runs.childSub, stepName: 'inner step' }),
    );
    assert.equal(
      request.uri,
      `dagu://runs/${dags.parent}/${runs.parent}/sub/${runs.childSub}/steps/inner%20step/logs`,
    );
    assert.equal(data.stdoutContent, 'inside the child');
    assert.equal(data.stderrContent, '');
    assert.equal(data.lineCount, 1);
  });

  test('URI mode reads the same log, query inside the URI', async () => {
    const { runs, dags } = dagu.seed;
    const { data } = await read({
      uri: `dagu://runs/${dags.twoSteps}/${runs.twoStepsFirst}/steps/step%20one/logs?stream=stderr`,
    });
    assert.equal(data.stdoutContent, '');
    assert.equal(data.stderrContent, 'warning from step one');
  });

  test('a step that never ran has no log file: both streams are empty, not an error', async () => {
    const { runs, dags } = dagu.seed;
    // The gate run waits for approval; its last step has not started (no log path).
    const { data } = await read(
      stepLog({ name: dags.gate, dagRunId: runs.gate, stepName: 'after approval' }),
    );
    assert.deepEqual(data, {
      stdoutContent: '',
      stderrContent: '',
      lineCount: 0,
      totalLines: 0,
      hasMore: false,
      isEstimate: false,
    });
    if (dagu.generation === 1) {
      // What Dagu 1.x itself answers for that step: a generic JSON 500.
      const raw = await daguApi(
        dagu,
        `/dag-runs/${dags.gate}/${runs.gate}/steps/${encodeURIComponent('after approval')}/log?stream=stdout`,
      );
      assert.equal(raw.status, 500);
      assert.equal((raw.body as { code?: string }).code, 'internal_error');
    }
  });

  test('unknown step, run and sub run are resource_not_found', async () => {
    const { runs, dags } = dagu.seed;
    const step = await fail(stepLog({ name: dags.fails, dagRunId: runs.fails, stepName: 'no such step' }));
    assert.equal(step.code, 'resource_not_found');
    assert.match(step.message, /no such step/);
    const run = await fail(stepLog({ name: dags.fails, dagRunId: 'no-such-run', stepName: 'boom' }));
    assert.equal(run.code, 'resource_not_found');
    const sub = await fail(
      stepLog({
        name: dags.parent,
        dagRunId: runs.parent,
        subRunId: 'no-such-child',
        stepName: 'inner step',
      }),
    );
    assert.equal(sub.code, 'resource_not_found');
  });

  test('a DAG the caller may not read is unauthorized', async () => {
    const { runs, dags } = dagu.seed;
    const onlyFails: AccessPolicy = {
      canReadDag: (name) => name === dags.fails,
      canReadWorkspace: () => true,
      readsWorkbooks: true,
      unrestricted: false,
      everyWorkspace: true,
      exactWorkspaces: undefined,
    };
    const error = await fail(
      stepLog({ name: dags.twoSteps, dagRunId: runs.twoStepsFirst, stepName: 'step one' }),
      onlyFails,
    );
    assert.equal(error.code, 'unauthorized');
  });

  test("a child run's log needs the child DAG too, not only its parent's", async () => {
    const { runs, dags } = dagu.seed;
    const onlyParent: AccessPolicy = {
      canReadDag: (name) => name === dags.parent,
      canReadWorkspace: () => true,
      readsWorkbooks: true,
      unrestricted: false,
      everyWorkspace: true,
      exactWorkspaces: undefined,
    };
    const address = { name: dags.parent, dagRunId: runs.parent, subRunId: runs.childSub };
    const child = await read(stepLog({ ...address, stepName: 'inner step' }));
    assert.notEqual(child.data.stdoutContent, '', 'the child step exists and has a log');
    const error = await fail(stepLog({ ...address, stepName: 'inner step' }), onlyParent);
    assert.equal(error.code, 'unauthorized');
    assert.match(error.message, new RegExp(dags.child));
  });

  test('a file name is not a DAG name on run-addressed targets either', async () => {
    const { dags } = dagu.seed;
    const error = await fail(stepLog({ name: `${dags.fails}.yaml`, dagRunId: 'latest', stepName: 'boom' }));
    assert.equal(error.code, 'resource_not_found');
  });
});

describe('foreach on a Dagu without foreach routes (1.x, and 2.x up to v2.15.1)', () => {
  test('neither serves the foreach REST routes (plain-text 404 from the router)', async () => {
    const { runs, dags, v2 } = dagu.seed;
    const path =
      v2 === undefined
        ? `/dag-runs/${dags.fails}/${runs.fails}/steps/boom/foreach`
        : `/dag-runs/${dags.foreach}/${v2.runs.foreach}/steps/${encodeURIComponent(v2.foreach.stepName)}/foreach`;
    const raw = await daguApi(dagu, path);
    assert.equal(raw.status, 404);
    assert.equal(typeof raw.body, 'string');
  });

  test('foreach reads: not found on 1.x (no foreach steps), unavailable for a real 2.x foreach step', async () => {
    const { runs, dags, v2 } = dagu.seed;
    const base =
      v2 === undefined
        ? { name: dags.fails, dagRunId: runs.fails, stepName: 'boom' }
        : { name: dags.foreach as string, dagRunId: v2.runs.foreach, stepName: v2.foreach.stepName };
    const bodyStepName = v2?.foreach.bodyStepName ?? 'body';
    for (const input of [
      { target: 'foreach_items', ...base },
      { target: 'foreach_item', ...base, item: '0' },
      { target: 'step_log', ...base, item: '0', bodyStepName },
      {
        uri: `dagu://runs/${base.name}/${base.dagRunId}/steps/${encodeURIComponent(base.stepName)}/foreach?status=failed`,
      },
    ]) {
      const error = await fail(input);
      if (v2 === undefined) {
        assert.equal(error.code, 'resource_not_found', JSON.stringify(input));
        assert.match(error.message, /is not a foreach step \(the connected Dagu 1\.x has no foreach steps\)/);
      } else {
        assert.equal(error.code, 'resource_unavailable', JSON.stringify(input));
        assert.match(error.message, /foreach/);
      }
    }
  });
});
