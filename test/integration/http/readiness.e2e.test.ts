// Readiness against a real Dagu that is stopped, hung (SIGSTOP: the process accepts connections and
// never answers) and started again on the same port, plus a fake upstream that hangs every request:
// `/readyz` always answers (from the probe's cached result, with its own probe timeout) while Dagu
// hangs, says why it is not ready, and the gateway logs exactly once when Dagu goes away and once when
// it is back. `/healthz` never depends on Dagu. How fast /readyz answers depends on the machine's load:
// the timings are reported here (diagnostics) and measured by `npm run bench:readyz`, not asserted.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { DAGU_PIN, freePort } from '../../support/dagu.ts';
import { FAULTS, startFaultServer } from '../../support/fake-dagu-faults.ts';
import { RestartableDagu } from '../../support/restartable-dagu.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Readyz {
  status: number;
  ms: number;
  body: {
    status: string;
    reason?: string;
    dagu: { url: string; reachable: boolean; version?: string; detail?: string };
  };
}

async function readyz(baseUrl: string): Promise<Readyz> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5000) });
  const body = (await response.json()) as Readyz['body'];
  return { status: response.status, ms: performance.now() - started, body };
}

/** Polls `/readyz` until it answers `status`, recording how long each answer took. */
async function readyzUntil(baseUrl: string, status: number, timings: number[]): Promise<Readyz> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = await readyz(baseUrl);
    timings.push(answer.ms);
    if (answer.status === status) return answer;
    if (Date.now() > deadline)
      throw new Error(`/readyz never answered ${status}: ${JSON.stringify(answer.body)}`);
    await sleep(50);
  }
}

const MESSAGES: Record<string, 'back' | 'gone'> = {
  'Dagu found': 'back',
  'Dagu is reachable again': 'back',
  'Dagu is unreachable; /readyz answers 503 until it is back': 'gone',
};

/** The readiness changes the gateway logged, in order. */
const transitions = (gateway: CapturedGateway) =>
  gateway
    .logText()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => MESSAGES[(JSON.parse(line) as { msg?: string }).msg ?? ''])
    .filter((change) => change !== undefined);

const summary = (timings: number[]) => {
  const sorted = [...timings].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `n=${sorted.length} p50=${at(0.5).toFixed(1)} ms max=${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms`;
};

describe('readiness against a real Dagu that stops, hangs and comes back', () => {
  let home: string;
  let dagu: RestartableDagu;
  let gateway: CapturedGateway;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'dagu-readiness-'));
    dagu = new RestartableDagu(home, await freePort());
    await dagu.start();
    gateway = await startCapturedGateway(
      {
        DAGU_URL: dagu.url,
        DAGU_API_BASE: DAGU_PIN.apiBase,
        // Reads may wait long; readiness must not.
        DAGU_TIMEOUT_MS: '20000',
        DAGU_PROBE_TIMEOUT_MS: '600',
        DAGU_PROBE_INTERVAL_MS: '200',
      },
      { logLevel: 'info' },
    );
  });
  after(async () => {
    await gateway?.close();
    await dagu?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test('ready with the version, unready while stopped or hung, ready again; one log line per change', async (t) => {
    const up = await readyzUntil(gateway.baseUrl, 200, []);
    assert.equal(up.body.status, 'ready');
    assert.equal(up.body.dagu.url, dagu.url);
    assert.equal(up.body.dagu.reachable, true);
    assert.match(up.body.dagu.version ?? '', /^v?\d+\.\d+\.\d+/);

    const stopped: number[] = [];
    await dagu.stop();
    const down = await readyzUntil(gateway.baseUrl, 503, stopped);
    assert.equal(down.body.status, 'not_ready');
    assert.match(down.body.reason ?? '', /^dagu: Dagu is unreachable/);
    for (let i = 0; i < 10; i++) await readyzUntil(gateway.baseUrl, 503, stopped);
    assert.equal((await fetch(`${gateway.baseUrl}/healthz`)).status, 200);

    await dagu.start();
    await readyzUntil(gateway.baseUrl, 200, []);

    const hung: number[] = [];
    dagu.signal('SIGSTOP');
    try {
      const stalled = await readyzUntil(gateway.baseUrl, 503, hung);
      assert.match(stalled.body.reason ?? '', /did not answer its health route within 600 ms/);
      for (let i = 0; i < 10; i++) await readyzUntil(gateway.baseUrl, 503, hung);
      const live = await fetch(`${gateway.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
      assert.equal(live.status, 200);
    } finally {
      dagu.signal('SIGCONT');
    }
    await readyzUntil(gateway.baseUrl, 200, []);

    // One line per change of state: never the same message twice in a row, gone and back in turn. (A
    // loaded machine may add a change of its own, such as a first probe that timed out.)
    const changes = transitions(gateway);
    assert.ok(changes.filter((change) => change === 'gone').length >= 2, changes.join(', '));
    changes.forEach((change, i) => {
      if (i > 0) assert.notEqual(change, changes[i - 1], changes.join(', '));
    });
    assert.equal(changes.at(-1), 'back');
    t.diagnostic(`/readyz with Dagu stopped: ${summary(stopped)}; hung (SIGSTOP): ${summary(hung)}`);
  });
});

test('/readyz answers 503 with a reason from the first request on, while every upstream request hangs', async (t) => {
  const upstream = await startFaultServer();
  // The fake hangs every request whose path names the fault: here the whole base path does.
  const gateway = await startCapturedGateway({
    DAGU_URL: `${upstream.url}/${FAULTS.hang}`,
    DAGU_API_BASE: '/api/v1',
    DAGU_TIMEOUT_MS: '20000',
  });
  try {
    const timings: number[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await readyz(gateway.baseUrl);
      timings.push(answer.ms);
      assert.equal(answer.status, 503);
      assert.match(answer.body.reason ?? '', /^dagu: /);
    }
    const last = await readyzUntil(gateway.baseUrl, 503, timings);
    assert.match(last.body.reason ?? '', /did not answer its health route within 750 ms/);
    t.diagnostic(`/readyz with a hanging fake upstream (default probe timeout): ${summary(timings)}`);
  } finally {
    await gateway.close();
    await upstream.close();
  }
});
