// Hostile names never reach another Dagu path, the client answers the real Dagu's refusals and
// health correctly, and reads change nothing in Dagu. Requests are observed through a recording
// proxy in front of the real Dagu.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isPathStructure } from '../../../src/dagu/client.ts';
import { isDagName, isDagRunId } from '../../../src/dagu/names.ts';
import type { DaguClient } from '../../../src/dagu/types.ts';
import { type DaguInstance, getTestDagu, startDagu, type TestDagu } from '../../support/dagu.ts';
import { clientFor, type Data, daguCounts, type Reader, readerFor } from '../../support/dagu-harness.ts';
import { type RecordingServer, startRecordingServer } from '../../support/recording-server.ts';

let dagu: TestDagu;
let proxy: RecordingServer;
let client: DaguClient;
let reader: Reader;

before(async () => {
  dagu = await getTestDagu();
  proxy = await startRecordingServer({ forwardTo: dagu.url });
  client = clientFor(dagu, proxy.url);
  reader = readerFor(client);
});
after(async () => {
  await client?.close();
  await proxy?.close();
  await dagu?.stop();
});

const PROBES = [
  '../two-steps',
  '..',
  '.',
  'two-steps/../fails',
  'two-steps/',
  'two-steps\\..\\fails',
  '%2F..%2Ftwo-steps',
  '..%2Ffails',
  '%2e%2e',
  'two-steps%2Fspec',
  'two%2Dsteps',
  'two-steps?x=1',
  'two-steps#frag',
  'two steps',
  'twö-steps ✓ 日本',
  // At the input cap (FIELD_MAX_LENGTH): a name no Dagu holds. Longer is invalid_tool_input
  // (test/integration/mcp/input-bounds.e2e.test.ts).
  'x'.repeat(1024),
  'two\u0000steps',
  '$HOME',
  `$${'{X}'}`,
  'x'.repeat(41),
  // A control: a name Dagu could hold (DAG name and run id alike) that does not exist, so Dagu is asked.
  'no-such_name-1',
];

/** Requests recorded while running `action`. */
async function observe(action: () => Promise<unknown>): Promise<string[]> {
  const start = proxy.requests.length;
  await action();
  return proxy.requests.slice(start).map((request) => request.rawUrl);
}

const base = () => dagu.apiBase;
const pathOf = (rawUrl: string) => rawUrl.split('?')[0] ?? '';

describe('hostile names', () => {
  for (const probe of PROBES) {
    const label = JSON.stringify(probe.length > 40 ? `${probe.slice(0, 20)}…(${probe.length})` : probe);

    it(`dag_spec ${label} is not found and only its own path is asked`, async () => {
      let error: Awaited<ReturnType<Reader['fail']>> | undefined;
      const urls = await observe(async () => {
        error = await reader.fail({ target: 'dag_spec', name: probe });
      });
      assert.equal(error?.code, 'resource_not_found', error?.message);
      const own = `${base()}/dags/${encodeURIComponent(probe)}/spec`;
      for (const url of urls) {
        const path = pathOf(url);
        assert.ok(path === own || path === `${base()}/dags`, `unexpected request ${url.slice(0, 120)}`);
        assert.ok(!path.includes('/..') || path === own, url);
      }
      const asked = urls.some((url) => pathOf(url) === own);
      // A name outside Dagu's rules (src/dagu/names.ts) is refused like path structure: never sent.
      if (isPathStructure(probe) || !isDagName(probe)) {
        assert.equal(asked, false, 'refused before any request');
      } else {
        assert.equal(asked, true, 'Dagu was asked and said not found');
        assert.equal(error?.upstreamStatus, 404);
      }
    });

    it(`run two-steps/${label} is not found and only its own path is asked`, async () => {
      let error: Awaited<ReturnType<Reader['fail']>> | undefined;
      const urls = await observe(async () => {
        error = await reader.fail({ target: 'run', name: 'two-steps', dagRunId: probe });
      });
      assert.equal(error?.code, 'resource_not_found', error?.message);
      const own = `${base()}/dag-runs/two-steps/${encodeURIComponent(probe)}`;
      for (const url of urls) {
        const path = pathOf(url);
        assert.ok(
          path === own || path === `${base()}/dags/two-steps` || path === `${base()}/dags`,
          `unexpected request ${url.slice(0, 120)}`,
        );
      }
      assert.equal(
        urls.some((url) => pathOf(url) === own),
        !isPathStructure(probe) && isDagRunId(probe),
      );
      // The DAG exists, so the run is what is missing: no suggestions.
      assert.equal(error?.details, undefined);
    });
  }

  it('a probe as the DAG of a run, and as a sub run, never reads another run', async () => {
    const { parent, twoStepsFirst } = dagu.seed.runs;
    // Dagu 1.30 decodes a run's DAG name twice: without the gateway's rule, `two%2Dsteps` and
    // `x%2F..%2Ftwo-steps` would read the runs of `two-steps`.
    for (const probe of [
      '../two-steps',
      'two-steps/..',
      '%2F..%2Ftwo-steps',
      'x%2F..%2Ftwo-steps',
      'two%2Dsteps',
      'two steps',
    ]) {
      const asDag = await reader.fail({ target: 'run', name: probe, dagRunId: twoStepsFirst });
      assert.equal(asDag.code, 'resource_not_found');
      const asSub = await reader.fail({ target: 'run', name: 'parent', dagRunId: parent, subRunId: probe });
      assert.equal(asSub.code, 'resource_not_found');
      const logs = await reader.fail({
        target: 'run_logs',
        name: 'two-steps',
        dagRunId: `${twoStepsFirst}/${probe}`,
      });
      assert.equal(logs.code, 'resource_not_found');
    }
  });

  it('URI mode: an escaped slash decodes into the value, which then does not exist', async () => {
    const { twoStepsFirst } = dagu.seed.runs;
    const urls = await observe(async () => {
      assert.equal(
        (await reader.fail({ uri: 'dagu://dags/..%2Ftwo-steps/spec' })).code,
        'resource_not_found',
      );
      assert.equal(
        (await reader.fail({ uri: `dagu://runs/two-steps/${twoStepsFirst}%2F..%2F${twoStepsFirst}` })).code,
        'resource_not_found',
      );
    });
    assert.ok(
      urls.every((url) => !url.includes('%2F..') && !url.includes('/../')),
      urls.join('\n'),
    );
    const dots = await reader.fail({ uri: 'dagu://dags/%2E%2E/spec' });
    assert.equal(dots.code, 'invalid_resource_uri');
  });

  it('query values are encoded and stay query values', async () => {
    const urls = await observe(() => reader.read({ target: 'runs', query: 'name=two-steps%26status%3D2' }));
    const runList = urls.filter((url) => pathOf(url) === `${base()}/dag-runs`);
    assert.equal(runList.length, 1);
    assert.doesNotMatch(runList[0] ?? '', /[?&]status=2/);
  });
});

describe('the client against the real Dagu', () => {
  it('the readiness probe finds the running Dagu reachable', async () => {
    assert.equal((await client.probe(AbortSignal.timeout(5000))).reachable, true);
    assert.ok(proxy.requests.some((request) => pathOf(request.rawUrl) === `${base()}/health`));
  });

  it('sends Accept: application/json and reuses connections', async () => {
    const before = proxy.connections();
    for (let i = 0; i < 8; i++) await client.get({ route: '/health' });
    assert.ok(proxy.connections() - before <= 2);
    assert.equal(proxy.requests.at(-1)?.headers.accept, 'application/json');
  });

  describe('a Dagu that requires a token', () => {
    let secured: DaguInstance;
    before(async () => {
      secured = await startDagu({ requireToken: true });
    });
    after(async () => {
      await secured?.stop();
    });

    it("a refused gateway credential is resource_unavailable that says it is the gateway's own", async () => {
      for (const token of [undefined, 'wrong-token']) {
        const refused = clientFor(secured, secured.url, token);
        try {
          const error = await readerFor(refused).fail({ target: 'dag', name: 'anything' });
          assert.equal(error.code, 'resource_unavailable');
          assert.equal(error.upstreamStatus, 401);
          assert.match(error.message, /gateway's own credential/);
        } finally {
          await refused.close();
        }
      }
    });

    it('the right token reads', async () => {
      assert.ok(secured.token !== undefined, 'the secured Dagu gave a token');
      const accepted = clientFor(secured, secured.url, secured.token);
      try {
        const { data } = await readerFor(accepted).read({ target: 'dags' });
        assert.deepEqual(data.items, []);
        assert.equal((await accepted.probe(AbortSignal.timeout(5000))).reachable, true);
      } finally {
        await accepted.close();
      }
    });
  });

  it('an unreachable Dagu is resource_unavailable', async () => {
    const closed = await startRecordingServer();
    const url = closed.url;
    await closed.close();
    const nowhere = clientFor(dagu, url);
    try {
      const error = await readerFor(nowhere).fail({ target: 'dags' });
      assert.equal(error.code, 'resource_unavailable');
      assert.equal(error.message, 'Dagu is unreachable.');
    } finally {
      await nowhere.close();
    }
  });
});

describe('reads do not change Dagu', () => {
  it('every dags and runs read leaves the DAG and run counts as they were', async () => {
    const before = await daguCounts(dagu);
    const { runs, dags } = dagu.seed;
    const reads: Data[] = [
      { target: 'dags' },
      { target: 'dags', query: 'labels=alpha,beta' },
      { target: 'dag', name: dags.fails },
      { target: 'dag_spec', name: dags.dotted },
      { target: 'dag_spec', name: dags.neverRan },
      { target: 'runs' },
      { target: 'runs', query: 'status=2&status=4&limit=2' },
      { target: 'run', name: dags.twoSteps, dagRunId: 'latest' },
      { target: 'run', name: dags.parent, dagRunId: runs.parent, subRunId: runs.childSub },
      { target: 'run', name: dags.gate, dagRunId: runs.gate },
      { target: 'run_logs', name: dags.fails, dagRunId: runs.fails },
      { target: 'run_logs', name: dags.goneLog, dagRunId: runs.goneLog, query: 'tail=1' },
    ];
    for (const input of reads) {
      const { data } = await reader.read(input);
      assert.equal(typeof data, 'object', JSON.stringify(input));
    }
    // Reads of what does not exist are part of the check; they must fail as not found, nothing else.
    for (const input of [
      { target: 'dag', name: 'nope-nope' },
      { target: 'run', name: dags.neverRan, dagRunId: 'latest' },
    ]) {
      assert.equal((await reader.fail(input)).code, 'resource_not_found', JSON.stringify(input));
    }
    assert.deepEqual(await daguCounts(dagu), before);
    const gate = await reader.read({ target: 'run', name: dags.gate, dagRunId: runs.gate });
    assert.equal(gate.data.status, 7, 'the waiting run still waits');
    const never = await reader.read({ target: 'dag', name: dags.neverRan });
    assert.equal(never.data.latestRun, undefined, 'the DAG that never ran still has not');
  });
});
