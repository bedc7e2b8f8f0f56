// runs, run (root and sub) and run_logs against the real Dagu, handlers called directly.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DaguClient } from '../../../src/dagu/types.ts';
import { EMPTY_LOG } from '../../../src/read/upstream/log.ts';
import { daguApi, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import {
  clientFor,
  type Data,
  onlyDags,
  type Reader,
  RFC3339_MS,
  readerFor,
} from '../../support/dagu-harness.ts';

let dagu: TestDagu;
let client: DaguClient;
let reader: Reader;

before(async () => {
  dagu = await getTestDagu();
  client = clientFor(dagu);
  reader = readerFor(client);
});
after(async () => {
  await client?.close();
  await dagu?.stop();
});

type Item = Data & { name: string; dagRunId: string };
const itemsOf = (data: Data) => data.items as Item[];
const idsOf = (data: Data) => itemsOf(data).map((item) => item.dagRunId);
const stepsOf = (data: Data) => data.steps as Data[];

/** The run's attempt id as Dagu stores it (status.jsonl under DAGU_HOME), to check attemptId. */
function storedAttemptId(home: string, dagRunId: string): string | undefined {
  const walk = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        const found = walk(path);
        if (found !== undefined) return found;
      } else if (entry === 'status.jsonl' && dir.includes(dagRunId)) {
        const last = readFileSync(path, 'utf8').trim().split('\n').at(-1) ?? '{}';
        return (JSON.parse(last) as { attemptId?: string }).attemptId;
      }
    }
    return undefined;
  };
  return walk(join(home, 'data', 'dag-runs'));
}

describe('runs', () => {
  it('lists every seeded root run, newest first, with the contract fields', async () => {
    const { data } = await reader.read({ target: 'runs' });
    const items = itemsOf(data);
    const ids = items.map((item) => item.dagRunId);
    const { runs } = dagu.seed;
    for (const key of [
      'twoStepsFirst',
      'twoStepsSecond',
      'fails',
      'parent',
      'dotted',
      'labelled',
      'manyLines',
      'gate',
      'goneLog',
    ] as const) {
      assert.ok(ids.includes(runs[key]), key);
    }
    assert.ok(ids.indexOf(runs.twoStepsSecond) < ids.indexOf(runs.twoStepsFirst), 'newest first');
    for (const item of items) {
      assert.equal(item.uri, `dagu://runs/${item.name}/${item.dagRunId}`);
      assert.equal(typeof item.status, 'number');
      assert.equal(typeof item.statusLabel, 'string');
      assert.match(String(item.startedAt), RFC3339_MS);
    }
    const fails = items.find((item) => item.dagRunId === runs.fails);
    assert.equal(fails?.name, 'fails');
    assert.equal(fails?.status, 2);
    assert.equal(fails?.statusLabel, 'failed');
    assert.match(String(fails?.finishedAt), RFC3339_MS);
    assert.equal(data.nextCursor, undefined);
    assert.doesNotMatch(JSON.stringify(data), /"log"|\.log"/);
  });

  it('timestamps are the UTC instants of what Dagu stored with its local offset', async () => {
    const raw = (await daguApi(dagu, `/dag-runs/fails/${dagu.seed.runs.fails}`)).body as {
      dagRunDetails: Data;
    };
    const stored = String(raw.dagRunDetails.startedAt);
    assert.match(stored, /[+-]\d{2}:\d{2}$|Z$/);
    const { data } = await reader.read({ target: 'runs', query: 'name=fails' });
    const item = itemsOf(data)[0];
    assert.equal(Date.parse(String(item?.startedAt)), Date.parse(stored));
    assert.match(String(item?.startedAt), /Z$/);
  });

  it('filters by name as a case-insensitive substring, dotted names included', async () => {
    const twoSteps = await reader.read({ target: 'runs', query: 'name=two-steps' });
    assert.deepEqual(idsOf(twoSteps.data), [dagu.seed.runs.twoStepsSecond, dagu.seed.runs.twoStepsFirst]);
    const dotted = await reader.read({ target: 'runs', query: 'name=DOTTED.N' });
    assert.deepEqual(idsOf(dotted.data), [dagu.seed.runs.dotted]);
  });

  it('filters by one status and by several statuses', async () => {
    const failed = await reader.read({ target: 'runs', query: 'status=2' });
    assert.deepEqual(idsOf(failed.data), [dagu.seed.runs.fails]);
    const some = await reader.read({ target: 'runs', query: 'status=2&status=7' });
    const waiting = [
      dagu.seed.runs.gate,
      ...(dagu.seed.v2 === undefined ? [] : [dagu.seed.v2.runs.humanTask]),
    ];
    assert.deepEqual(idsOf(some.data).sort(), [dagu.seed.runs.fails, ...waiting].sort());
  });

  it('filters by run id substring, and dagRunId=latest gives the newest matching run', async () => {
    const part = dagu.seed.runs.fails.slice(-12);
    const byId = await reader.read({ target: 'runs', query: `dagRunId=${part}` });
    assert.deepEqual(idsOf(byId.data), [dagu.seed.runs.fails]);
    const latest = await reader.read({ target: 'runs', query: 'name=two-steps&dagRunId=latest' });
    assert.deepEqual(idsOf(latest.data), [dagu.seed.runs.twoStepsSecond]);
  });

  it('filters by labels of the run’s DAG (one, and several that must all match)', async () => {
    const alpha = await reader.read({ target: 'runs', query: 'labels=alpha' });
    assert.deepEqual(idsOf(alpha.data).sort(), [dagu.seed.runs.dotted, dagu.seed.runs.labelled].sort());
    const both = await reader.read({ target: 'runs', query: 'labels=alpha,beta' });
    assert.deepEqual(idsOf(both.data), [dagu.seed.runs.labelled]);
  });

  it('applies limit and pages with nextCursor until the list ends', async () => {
    const all = idsOf((await reader.read({ target: 'runs' })).data);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const query: string = cursor === undefined ? 'limit=4' : `limit=4&cursor=${encodeURIComponent(cursor)}`;
      const { data } = await reader.read({ target: 'runs', query });
      assert.ok(itemsOf(data).length <= 4);
      seen.push(...idsOf(data));
      cursor = data.nextCursor as string | undefined;
      if (cursor === undefined) break;
      assert.equal(typeof cursor, 'string');
    }
    assert.deepEqual(seen, all);
  });

  it('a cursor used with other filters is refused: invalid_tool_input, or invalid_resource_uri in URI mode', async () => {
    const first = await reader.read({ target: 'runs', query: 'limit=2' });
    const cursor = encodeURIComponent(String(first.data.nextCursor));
    const target = await reader.fail({ target: 'runs', query: `limit=2&name=fails&cursor=${cursor}` });
    assert.equal(target.code, 'invalid_tool_input');
    assert.equal(target.field, 'query');
    const uri = await reader.fail({ uri: `dagu://runs?cursor=garbage` });
    assert.equal(uri.code, dagu.generation === 1 ? 'invalid_resource_uri' : 'invalid_resource_uri');
    assert.equal(uri.field, 'uri');
  });

  it('an empty answer (Dagu 1.x sends dagRuns: null, 2.x an empty array) is an empty list', async () => {
    const future = Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
    const raw = await daguApi(dagu, `/dag-runs?fromDate=${future}`);
    assert.deepEqual((raw.body as Data).dagRuns, dagu.generation === 1 ? null : [], 'what Dagu answers');
    const { data } = await reader.read({ target: 'runs', query: `fromDate=${future}` });
    assert.deepEqual(data, { items: [] });
  });

  it('lists only runs of readable DAGs when access is restricted', async () => {
    const { data } = await reader.read({ target: 'runs' }, onlyDags('fails'));
    assert.deepEqual(idsOf(data), [dagu.seed.runs.fails]);
  });
});

describe('run', () => {
  it('a failed root run: every contract field, and the step error without Dagu paths', async () => {
    const { fails } = dagu.seed.runs;
    const { data } = await reader.read({ target: 'run', name: 'fails', dagRunId: fails });
    assert.equal(data.name, 'fails');
    assert.equal(data.dagRunId, fails);
    assert.equal(data.uri, `dagu://runs/fails/${fails}`);
    assert.equal(data.logsUri, `dagu://runs/fails/${fails}/logs`);
    assert.equal(data.status, 2);
    assert.equal(data.statusLabel, 'failed');
    assert.match(String(data.startedAt), RFC3339_MS);
    assert.match(String(data.finishedAt), RFC3339_MS);
    assert.equal(typeof data.attemptId, 'string');
    if (dagu.home !== '') assert.equal(data.attemptId, storedAttemptId(dagu.home, fails));
    const steps = stepsOf(data);
    assert.equal(steps.length, 1);
    const [boom] = steps;
    assert.equal(boom?.name, 'boom');
    assert.equal(boom?.status, 2);
    assert.equal(boom?.statusLabel, 'failed');
    assert.equal(boom?.logUri, `dagu://runs/fails/${fails}/steps/boom/logs`);
    assert.match(String(boom?.error), /exit status 3/);
    assert.match(String(boom?.error), new RegExp(dagu.seed.facts.failsStderr));
    assert.equal(data.humanTaskResumePending, undefined);
    const text = JSON.stringify(data);
    if (dagu.home !== '') assert.ok(!text.includes(dagu.home), 'no Dagu path in data');
    assert.doesNotMatch(text, /"stdout"|"stderr"|"log"/);
  });

  it('steps come in execution order with root-addressed, escaped log URIs', async () => {
    const id = dagu.seed.runs.twoStepsFirst;
    const { data } = await reader.read({ target: 'run', name: 'two-steps', dagRunId: id });
    const steps = stepsOf(data);
    assert.deepEqual(
      steps.map((step) => step.name),
      ['step one', 'step two'],
    );
    assert.deepEqual(
      steps.map((step) => step.logUri),
      [
        `dagu://runs/two-steps/${id}/steps/step%20one/logs`,
        `dagu://runs/two-steps/${id}/steps/step%20two/logs`,
      ],
    );
    for (const step of steps) {
      assert.equal(step.status, 4);
      assert.equal(step.statusLabel, 'succeeded');
      assert.equal(step.error, undefined);
      assert.match(String(step.startedAt), RFC3339_MS);
    }
  });

  it('dagRunId=latest resolves to the real id in data.uri', async () => {
    const { data, request } = await reader.read({ target: 'run', name: 'two-steps', dagRunId: 'latest' });
    assert.equal(request.uri, 'dagu://runs/two-steps/latest');
    assert.equal(data.dagRunId, dagu.seed.runs.twoStepsSecond);
    assert.equal(data.uri, `dagu://runs/two-steps/${dagu.seed.runs.twoStepsSecond}`);
    assert.equal(data.logsUri, `dagu://runs/two-steps/${dagu.seed.runs.twoStepsSecond}/logs`);
  });

  it('a dotted DAG name reads like any other', async () => {
    const { data } = await reader.read({ uri: `dagu://runs/dotted.name/${dagu.seed.runs.dotted}` });
    assert.equal(data.name, 'dotted.name');
    assert.equal(data.uri, `dagu://runs/dotted.name/${dagu.seed.runs.dotted}`);
  });

  it('a parent step lists its child run with the canonical sub-run URI', async () => {
    const { parent, childSub } = dagu.seed.runs;
    const { data } = await reader.read({ target: 'run', name: 'parent', dagRunId: parent });
    const [call] = stepsOf(data);
    assert.equal(call?.name, 'call child');
    // Dagu 2.x names the child DAG of a sub run; 1.x does not.
    const dagName = dagu.generation === 1 ? {} : { dagName: 'child' };
    assert.deepEqual(call?.subRuns, [
      { dagRunId: childSub, uri: `dagu://runs/parent/${parent}/sub/${childSub}`, ...dagName },
    ]);
  });

  it('a sub run: child name and id, child URI, child-addressed step logs, no logsUri', async () => {
    const { parent, childSub } = dagu.seed.runs;
    for (const input of [
      { target: 'run', name: 'parent', dagRunId: parent, subRunId: childSub },
      { uri: `dagu://runs/parent/${parent}/sub/${childSub}` },
      { target: 'run', name: 'parent', dagRunId: 'latest', subRunId: childSub },
    ]) {
      const { data } = await reader.read(input);
      assert.equal(data.name, 'child');
      assert.equal(data.dagRunId, childSub);
      assert.equal(data.uri, `dagu://runs/parent/${parent}/sub/${childSub}`);
      assert.equal(data.logsUri, undefined);
      assert.equal(data.status, 4);
      assert.equal(data.statusLabel, 'succeeded');
      assert.match(String(data.startedAt), RFC3339_MS);
      assert.equal(typeof data.attemptId, 'string');
      const steps = stepsOf(data);
      assert.deepEqual(
        steps.map((step) => step.name),
        ['inner step'],
      );
      assert.equal(steps[0]?.logUri, `dagu://runs/parent/${parent}/sub/${childSub}/steps/inner%20step/logs`);
    }
  });

  it('a run waiting at an approval gate shows the gate on the waiting step', async () => {
    const { gate } = dagu.seed.runs;
    const { data } = await reader.read({ target: 'run', name: 'approval-gate', dagRunId: gate });
    assert.equal(data.status, 7);
    assert.equal(data.statusLabel, 'waiting');
    const steps = stepsOf(data);
    assert.deepEqual(
      steps.map((step) => [step.name, step.statusLabel]),
      [
        ['prepare', 'succeeded'],
        ['approve release', 'waiting'],
        ['after approval', 'not_started'],
      ],
    );
    assert.deepEqual(steps[1]?.approval, {
      prompt: dagu.seed.facts.gatePrompt,
      input: dagu.seed.facts.gateInput,
      required: dagu.seed.facts.gateRequired,
    });
    assert.equal(steps[0]?.approval, undefined);
    assert.equal(steps[2]?.startedAt, undefined);
    assert.equal(steps[2]?.finishedAt, undefined);
  });

  it('a run waiting at a human task (2.x) shows the task on the waiting step', async () => {
    const { v2 } = dagu.seed;
    if (v2 === undefined) {
      // Dagu 1.x has no human tasks: the seed wrote no such DAG there.
      const error = await reader.fail({ target: 'run', name: 'human-task', dagRunId: 'latest' });
      assert.equal(error.code, 'resource_not_found');
      return;
    }
    const { data } = await reader.read({ target: 'run', name: 'human-task', dagRunId: v2.runs.humanTask });
    assert.equal(data.status, 7);
    assert.equal(data.statusLabel, 'waiting');
    const steps = stepsOf(data);
    assert.deepEqual(
      steps.map((step) => [step.name, step.statusLabel]),
      [
        ['gather', 'succeeded'],
        [v2.humanTask.stepName, 'waiting'],
      ],
    );
    assert.deepEqual(steps[1]?.humanTask, {
      prompt: v2.humanTask.prompt,
      form: {
        type: 'object',
        properties: { auditor: { type: 'string' } },
        required: ['auditor'],
        additionalProperties: false,
      },
    });
    assert.equal(steps[1]?.approval, undefined);
    assert.equal(steps[0]?.humanTask, undefined);
  });

  it('an unknown run of an existing DAG is resource_not_found without suggestions', async () => {
    const error = await reader.fail({ target: 'run', name: 'fails', dagRunId: 'no-such-run' });
    assert.equal(error.code, 'resource_not_found');
    assert.equal(error.message, 'DAG-run "no-such-run" of DAG "fails" does not exist.');
    assert.equal(error.details, undefined);
  });

  it('a run of an unknown DAG says the DAG does not exist and suggests close names', async () => {
    const error = await reader.fail({ target: 'run', name: 'fials', dagRunId: 'x' });
    assert.equal(error.code, 'resource_not_found');
    assert.equal(error.message, 'DAG "fials" does not exist.');
    assert.deepEqual(error.details, { didYouMean: ['fails'] });
  });

  it('an unknown sub run is resource_not_found', async () => {
    const error = await reader.fail({
      target: 'run',
      name: 'parent',
      dagRunId: dagu.seed.runs.parent,
      subRunId: 'nope',
    });
    assert.equal(error.code, 'resource_not_found');
    assert.match(error.message, /^Sub DAG-run "nope" of DAG-run/);
  });

  it('a run of a DAG the caller may not read is unauthorized', async () => {
    const error = await reader.fail(
      { target: 'run', name: 'fails', dagRunId: dagu.seed.runs.fails },
      onlyDags('x'),
    );
    assert.equal(error.code, 'unauthorized');
  });
});

describe('run_logs', () => {
  it('scheduler log (last 500 lines by default) plus one entry per step', async () => {
    const id = dagu.seed.runs.twoStepsFirst;
    const { data, request } = await reader.read({ target: 'run_logs', name: 'two-steps', dagRunId: id });
    assert.equal(request.uri, `dagu://runs/two-steps/${id}/logs`);
    const log = data.schedulerLog as Data;
    assert.equal(typeof log.content, 'string');
    assert.ok(String(log.content).length > 0);
    assert.equal(log.lineCount, String(log.content).split('\n').length);
    assert.equal(log.totalLines, log.lineCount);
    assert.equal(log.hasMore, false);
    const stepLogs = data.stepLogs as Data[];
    assert.deepEqual(
      stepLogs.map((step) => [step.stepName, step.status, step.statusLabel, step.hasStdout, step.hasStderr]),
      [
        ['step one', 4, 'succeeded', true, true],
        ['step two', 4, 'succeeded', true, true],
      ],
    );
    for (const step of stepLogs) assert.match(String(step.startedAt), RFC3339_MS);
    assert.equal(data.status, 4);
    if (dagu.home !== '') assert.ok(!JSON.stringify(data).includes(dagu.home));
  });

  it('tail returns the LAST lines (Dagu without tail would return the first)', async () => {
    const id = dagu.seed.runs.twoStepsFirst;
    const full = String(
      (
        (await reader.read({ target: 'run_logs', name: 'two-steps', dagRunId: id, query: 'tail=10000' })).data
          .schedulerLog as Data
      ).content,
    ).split('\n');
    assert.ok(full.length >= 3, 'the scheduler log has a few lines');
    const { data } = await reader.read({ uri: `dagu://runs/two-steps/${id}/logs?tail=2` });
    const log = data.schedulerLog as Data;
    assert.deepEqual(String(log.content).split('\n'), full.slice(-2));
    assert.equal(log.lineCount, 2);
    assert.equal(log.totalLines, full.length);
    assert.equal(log.hasMore, true);
  });

  it('a missing scheduler log file is an empty log, not an error', async () => {
    const { goneLog } = dagu.seed.runs;
    const { data } = await reader.read({ target: 'run_logs', name: 'gone-log', dagRunId: goneLog });
    assert.deepEqual(data.schedulerLog, EMPTY_LOG);
    assert.deepEqual(
      (data.stepLogs as Data[]).map((step) => step.stepName),
      ['only'],
    );
  });

  it('a step that never started has no streams', async () => {
    const { data } = await reader.read({ target: 'run_logs', name: 'approval-gate', dagRunId: 'latest' });
    const after = (data.stepLogs as Data[]).find((step) => step.stepName === 'after approval');
    assert.equal(after?.hasStdout, false);
    assert.equal(after?.hasStderr, false);
    assert.equal(data.dagRunId, dagu.seed.runs.gate);
  });

  it('an unknown run is resource_not_found', async () => {
    const error = await reader.fail({ target: 'run_logs', name: 'fails', dagRunId: 'nope' });
    assert.equal(error.code, 'resource_not_found');
  });
});
