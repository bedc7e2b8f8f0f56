// SIGTERM under keep-alive load, on the package's bin as users run it (src/http/drain.ts, src/main.ts):
// `/readyz` answers 503 at once, every call sent during the drain is served, no call is lost on a
// keep-alive connection the gateway closes, and the process exits 0 within DRAIN_MS plus the longest
// call in flight (measured, with a margin for a loaded machine), far from the forced exit. The
// callers stop sending shortly before the drain ends, as a load balancer that saw `/readyz` fail
// would stop sending them (the fleet test, test/integration/deploy/fleet.e2e.test.ts, has one).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, newApiKey, postMcp, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, startBin } from '../../support/bin.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';

const DRAIN_MS = 1500;
const CALLERS = 6;
const MARGIN_MS = 2500;

interface Outcome {
  sentAt: number;
  ms: number;
  status?: number;
  /** The error's code when no answer came. */
  error?: string;
}

const causeCode = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error instanceof Error ? error.message : String(error));
};

describe('SIGTERM under keep-alive load', () => {
  let dagu: TestDagu;
  let gateway: BinProcess;
  const key = newApiKey('drain');
  before(async () => {
    ensureBuilt();
    dagu = await getTestDagu();
    gateway = await startBin({
      env: baseEnv({
        PORT: '0',
        AUDIT_LOG: 'stderr',
        AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'drain', key }]),
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        RATE_LIMIT_PER_MINUTE: '1000000',
        MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
        DRAIN_MS: String(DRAIN_MS),
      }),
    });
  });
  after(async () => {
    await gateway?.stop();
  });

  test(`/readyz 503 at once, every call served, exit 0 within DRAIN_MS (${DRAIN_MS} ms) + the longest call`, async () => {
    const outcomes: Outcome[] = [];
    let calling = true;
    let stopAt = Number.POSITIVE_INFINITY;
    const caller = async () => {
      while (calling && performance.now() < stopAt) {
        const sentAt = performance.now();
        try {
          const response = await postMcp(gateway.mcpUrl, bearer(key), toolCallBody({ target: 'dags' }));
          outcomes.push({ sentAt, ms: performance.now() - sentAt, status: response.status });
        } catch (error) {
          outcomes.push({ sentAt, ms: performance.now() - sentAt, error: causeCode(error) });
        }
      }
    };
    const callers = Array.from({ length: CALLERS }, caller);
    while (outcomes.length < 30) await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await fetch(`${gateway.address}/readyz`)).status, 200);

    const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
      gateway.child.once('exit', (code) => resolve({ code, ms: performance.now() - signalled })),
    );
    const signalled = performance.now();
    stopAt = signalled + DRAIN_MS - 300;
    gateway.child.kill('SIGTERM');
    // The first /readyz after the signal (the signal is handled between two requests).
    let readyz = 200;
    while (readyz === 200) readyz = (await fetch(`${gateway.address}/readyz`)).status;
    const notReadyMs = performance.now() - signalled;
    assert.equal(readyz, 503);

    const exit = await exited;
    calling = false;
    await Promise.all(callers);

    const duringDrain = outcomes.filter((outcome) => outcome.sentAt >= signalled);
    const lost = outcomes.filter((outcome) => outcome.status !== 200);
    const longest = Math.max(...outcomes.map((outcome) => outcome.ms));
    process.stdout.write(
      `# drain: /readyz 503 after ${notReadyMs.toFixed(0)} ms; exit ${exit.code} after ${exit.ms.toFixed(0)} ms ` +
        `(DRAIN_MS ${DRAIN_MS}, longest call ${longest.toFixed(0)} ms); ${outcomes.length} calls, ` +
        `${duringDrain.filter((outcome) => outcome.status === 200).length} served after SIGTERM, ${lost.length} lost\n`,
    );
    assert.deepEqual(lost, []);
    assert.ok(
      duringDrain.filter((outcome) => outcome.status === 200).length > 0,
      'calls were served during the drain',
    );
    assert.equal(exit.code, 0, gateway.stdout());
    assert.ok(exit.ms >= DRAIN_MS - 50, `exited after ${exit.ms} ms, before the drain ended`);
    assert.ok(exit.ms < DRAIN_MS + longest + MARGIN_MS, `exited after ${exit.ms} ms`);
    assert.ok(notReadyMs < 1000, `/readyz turned 503 after ${notReadyMs} ms`);
  });
});
