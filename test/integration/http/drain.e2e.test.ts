// SIGTERM under keep-alive load, on the package's bin as users run it (src/http/drain.ts, src/main.ts):
// `/readyz` answers 503 at once, every call sent during the drain is served, no call is lost on a
// keep-alive connection the gateway closes, and the process exits 0 within DRAIN_MS plus the longest
// call in flight (measured, with a margin for a loaded machine), far from the forced exit. The
// callers stop sending shortly before the drain ends, as a load balancer that saw `/readyz` fail
// would stop sending them (the fleet test, test/integration/deploy/fleet.e2e.test.ts, has one).
import assert from 'node:assert/strict';
import type { ClientHttp2Session } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { bearer, newApiKey, postMcp, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, startBin } from '../../support/bin.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { http2Get, openSession } from '../../support/h2.ts';
import { createTestCa, type TestCa } from '../../support/tls.ts';

const DRAIN_MS = 1500;
const CALLERS = 6;
/** After the drain and the longest call: the close, the exit, and a loaded machine. */
const MARGIN_MS = 1000;

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

describe('SIGTERM with idle HTTP/2 sessions (native TLS)', () => {
  const SESSIONS = 20;
  const H2_DRAIN_MS = 1500;
  /** Past this the test fails instead of waiting for the forced exit (REQUEST_TIMEOUT_MS below). */
  const DEADLINE_MS = H2_DRAIN_MS + 6000;
  let dagu: TestDagu;
  let ca: TestCa;
  let gateway: BinProcess;
  before(async () => {
    ensureBuilt();
    dagu = await getTestDagu();
    ca = createTestCa();
    const pair = ca.issue('drain');
    gateway = await startBin({
      env: baseEnv({
        PORT: '0',
        AUDIT_LOG: 'stderr',
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        TLS_CERT_FILE: pair.certFile,
        TLS_KEY_FILE: pair.keyFile,
        DRAIN_MS: String(H2_DRAIN_MS),
        REQUEST_TIMEOUT_MS: '3000',
      }),
    });
  });
  after(async () => {
    await gateway?.stop();
    ca?.remove();
  });

  test(`every session gets GOAWAY at once and is closed within DRAIN_MS (${H2_DRAIN_MS} ms); a session opened during the drain is served, then told; exit 0 within DRAIN_MS + 1 s`, async () => {
    const baseUrl = gateway.address.replace('127.0.0.1', 'localhost');
    interface Watched {
      session: ClientHttp2Session;
      goaway: Promise<{ code: number; ms: number }>;
      closed: Promise<number>;
    }
    let signalled = Number.NaN;
    const watch = (session: ClientHttp2Session): Watched => {
      session.on('error', () => {});
      return {
        session,
        goaway: new Promise((resolve) =>
          session.once('goaway', (code: number) => resolve({ code, ms: performance.now() - signalled })),
        ),
        closed: new Promise((resolve) => session.once('close', () => resolve(performance.now() - signalled))),
      };
    };
    // Each session asks once (its first stream), then stays open and idle.
    const idle = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const watched = watch(await openSession(baseUrl, ca.caPem));
        assert.equal((await http2Get(watched.session, '/healthz')).status, 200);
        return watched;
      }),
    );
    const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
      gateway.child.once('exit', (code) => resolve({ code, ms: performance.now() - signalled })),
    );
    signalled = performance.now();
    gateway.child.kill('SIGTERM');

    const deadline = (what: string) =>
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${what} not within ${DEADLINE_MS} ms`)), DEADLINE_MS).unref(),
      );
    const goaways = await Promise.race([Promise.all(idle.map((s) => s.goaway)), deadline('GOAWAY')]);
    const closes = await Promise.race([Promise.all(idle.map((s) => s.closed)), deadline('every close')]);

    // A client that reconnects during the drain is still served, and told to go with its answer.
    const late = watch(await openSession(baseUrl, ca.caPem));
    const lateStatus = (await http2Get(late.session, '/healthz')).status;
    const lateGoaway = await Promise.race([late.goaway, deadline('GOAWAY after the answer')]);
    const exit = await Promise.race([exited, deadline('the exit')]);
    const slowestGoaway = Math.max(...goaways.map((goaway) => goaway.ms));
    process.stdout.write(
      `# h2 drain: ${SESSIONS} idle sessions, GOAWAY within ${slowestGoaway.toFixed(0)} ms, ` +
        `all closed within ${Math.max(...closes).toFixed(0)} ms; exit ${exit.code} after ${exit.ms.toFixed(0)} ms (DRAIN_MS ${H2_DRAIN_MS})\n`,
    );
    assert.deepEqual([...new Set(goaways.map((goaway) => goaway.code))], [0], 'GOAWAY NO_ERROR');
    assert.ok(slowestGoaway < H2_DRAIN_MS, `GOAWAY after ${slowestGoaway} ms`);
    assert.ok(Math.max(...closes) < H2_DRAIN_MS, `closed after ${Math.max(...closes)} ms`);
    assert.equal(lateStatus, 200);
    assert.equal(lateGoaway.code, 0);
    assert.equal(exit.code, 0, gateway.stdout());
    assert.ok(exit.ms >= H2_DRAIN_MS - 50, `exited after ${exit.ms} ms, before the drain ended`);
    assert.ok(exit.ms < H2_DRAIN_MS + 1000, `exited after ${exit.ms} ms`);
  });
});
