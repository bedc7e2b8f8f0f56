import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import {
  createDaguReadiness,
  type DaguProbe,
  type DaguProbeResult,
  type DaguReadiness,
} from '../../../src/dagu/readiness.ts';

interface LogLine {
  level: 'info' | 'warn';
  facts: Record<string, unknown>;
  message: string;
}

function recordingLog() {
  const lines: LogLine[] = [];
  return {
    lines,
    log: {
      info: (facts: Record<string, unknown>, message: string) =>
        lines.push({ level: 'info', facts, message }),
      warn: (facts: Record<string, unknown>, message: string) =>
        lines.push({ level: 'warn', facts, message }),
    } as never,
  };
}

/** A probe whose answers the test sets; counts its calls and keeps why a hanging one was aborted. */
function scriptedProbe(initial: DaguProbeResult) {
  let answer: DaguProbeResult | 'hang' = initial;
  let calls = 0;
  const abortReasons: unknown[] = [];
  const probe: DaguProbe = (signal) => {
    calls += 1;
    if (answer === 'hang') {
      return new Promise((_resolve, reject) => {
        const abort = () => {
          abortReasons.push(signal.reason);
          reject(new Error('aborted'));
        };
        signal.addEventListener('abort', abort, { once: true });
      });
    }
    return Promise.resolve(answer);
  };
  return {
    probe,
    set: (next: DaguProbeResult | 'hang') => {
      answer = next;
    },
    calls: () => calls,
    abortReasons,
  };
}

const UP: DaguProbeResult = { reachable: true, version: 'v2.15.1', apiBase: '/api/v1', generation: 2 };
const DOWN: DaguProbeResult = { reachable: false, detail: 'Dagu is unreachable. (ECONNREFUSED)' };

let open: DaguReadiness[] = [];
afterEach(() => {
  for (const readiness of open) readiness.close();
  open = [];
});

function readinessWith(probe: DaguProbe, extra: { timeoutMs?: number; firstResultWaitMs?: number } = {}) {
  const { lines, log } = recordingLog();
  const readiness = createDaguReadiness({
    probe,
    url: 'http://gateway:s3cret@dagu.internal:8080/base/',
    log,
    timeoutMs: extra.timeoutMs ?? 200,
    intervalMs: 0,
    ...(extra.firstResultWaitMs === undefined ? {} : { firstResultWaitMs: extra.firstResultWaitMs }),
  });
  open.push(readiness);
  return { readiness, lines };
}

describe('Dagu readiness', () => {
  test('reports the URL without credentials, the version and the dialect found', async () => {
    const { readiness } = readinessWith(scriptedProbe(UP).probe);
    const snapshot = await readiness.current();
    assert.equal(snapshot.url, 'http://dagu.internal:8080/base');
    assert.equal(snapshot.reachable, true);
    assert.equal(snapshot.version, 'v2.15.1');
    assert.equal(snapshot.apiBase, '/api/v1');
    assert.equal(snapshot.generation, 2);
    assert.match(snapshot.checkedAt ?? '', /^\d{4}-\d\d-\d\dT/);
  });

  test('answers from the cache: current() does not probe again', async () => {
    const scripted = scriptedProbe(UP);
    const { readiness } = readinessWith(scripted.probe);
    await readiness.current();
    const calls = scripted.calls();
    for (let i = 0; i < 5; i++) await readiness.current();
    assert.equal(scripted.calls(), calls);
  });

  test('a hanging probe ends at its own timeout with a reason naming it', async () => {
    const scripted = scriptedProbe(UP);
    scripted.set('hang');
    // The first-result wait is far longer than the probe's timeout: current() can answer only because
    // the probe ended (had the wait run out instead, the detail would say "not been checked yet").
    const { readiness } = readinessWith(scripted.probe, { timeoutMs: 100, firstResultWaitMs: 60_000 });
    // A timer set after the probe's own and twice as long: timers fire in the order they are due, however
    // late a loaded machine runs them, and the probe's end reaches current() without another timer.
    let laterTimerFired = false;
    const laterTimer = setTimeout(() => {
      laterTimerFired = true;
    }, 200);
    const snapshot = await readiness.current();
    clearTimeout(laterTimer);
    assert.equal(laterTimerFired, false, 'the probe ended before a timer twice its timeout');
    assert.equal(snapshot.reachable, false);
    assert.equal(snapshot.detail, 'Dagu did not answer its health route within 100 ms');
    // What ended it was the probe's timeout signal, not another abort.
    assert.equal(scripted.abortReasons.length, 1);
    assert.equal((scripted.abortReasons[0] as Error).name, 'TimeoutError');
  });

  test('before the first probe ends, current() waits at most firstResultWaitMs and says why', async () => {
    const scripted = scriptedProbe(UP);
    scripted.set('hang');
    const { readiness } = readinessWith(scripted.probe, { timeoutMs: 5000, firstResultWaitMs: 50 });
    const snapshot = await readiness.current();
    assert.equal(snapshot.reachable, false);
    assert.match(snapshot.detail ?? '', /not been checked yet/);
    assert.equal(snapshot.checkedAt, undefined);
  });

  test('logs once when Dagu goes away and once when it is back', async () => {
    const scripted = scriptedProbe(UP);
    const { readiness, lines } = readinessWith(scripted.probe);
    await readiness.current();
    scripted.set(DOWN);
    for (let i = 0; i < 3; i++) await readiness.refresh();
    scripted.set(UP);
    for (let i = 0; i < 3; i++) await readiness.refresh();
    assert.deepEqual(
      lines.map((line) => [line.level, line.message]),
      [
        ['info', 'Dagu found'],
        ['warn', 'Dagu is unreachable; /readyz answers 503 until it is back'],
        ['info', 'Dagu is reachable again'],
      ],
    );
    assert.equal(lines[1]?.facts.reason, DOWN.detail);
    assert.equal(lines[1]?.facts.dagu, 'http://dagu.internal:8080/base');
    assert.equal(lines[2]?.facts.version, 'v2.15.1');
  });

  test('a Dagu that answers but does not fit (an explicit base of the other generation) is logged once as unusable', async () => {
    const scripted = scriptedProbe(UP);
    const { readiness, lines } = readinessWith(scripted.probe);
    await readiness.current();
    const misfit = { ...UP, problem: 'DAGU_API_BASE=/api/v2 is the REST base of Dagu 1.x, but …' };
    scripted.set(misfit);
    for (let i = 0; i < 3; i++) await readiness.refresh();
    scripted.set({ ...UP, apiBase: '/api/v2', generation: 1, version: '1.30.3' });
    await readiness.refresh();
    assert.deepEqual(
      lines.map((line) => [line.level, line.message]),
      [
        ['info', 'Dagu found'],
        ['warn', 'Dagu answers but cannot be used; /readyz answers 503'],
        ['info', 'Dagu is reachable again'],
      ],
    );
    assert.equal(lines[1]?.facts.reason, misfit.problem);
    scripted.set(UP);
    await readiness.refresh();
    assert.deepEqual(lines.at(-1)?.message, 'Dagu REST dialect changed');
  });

  test('an observed outcome that contradicts the cached state probes at once; an agreeing one does not', async () => {
    const scripted = scriptedProbe(UP);
    const { readiness } = readinessWith(scripted.probe);
    await readiness.current();
    const calls = scripted.calls();
    readiness.observe(true);
    assert.equal(scripted.calls(), calls);
    scripted.set(DOWN);
    readiness.observe(false);
    assert.equal(scripted.calls(), calls + 1);
    assert.equal((await readiness.refresh()).reachable, false);
  });

  test('concurrent refreshes share one probe', async () => {
    const scripted = scriptedProbe(UP);
    const { readiness } = readinessWith(scripted.probe);
    await readiness.current();
    const calls = scripted.calls();
    await Promise.all([readiness.refresh(), readiness.refresh(), readiness.refresh()]);
    assert.equal(scripted.calls(), calls + 1);
  });

  test('the background timer probes on its own', async () => {
    const scripted = scriptedProbe(UP);
    const readiness = createDaguReadiness({
      probe: scripted.probe,
      url: 'http://127.0.0.1:1',
      log: recordingLog().log,
      timeoutMs: 100,
      intervalMs: 20,
    });
    open.push(readiness);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.ok(scripted.calls() >= 3, `calls: ${scripted.calls()}`);
  });
});
