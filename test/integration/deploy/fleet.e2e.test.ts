// A fleet that loses nothing: three replicas of the package's bin, started as users start them,
// behind a real HAProxy (Debian's package) running deploy/haproxy/haproxy.cfg with its `/readyz`
// health check, sharing the rate limit through a real Redis, in front of a real Dagu of their own.
// Callers read without pause while each replica is restarted in turn (SIGTERM: drain, then start
// again), one is killed (SIGKILL), Redis is restarted and Dagu is restarted. Counted and printed:
// no failed call during the rolling restart or Redis's restart; after SIGKILL only calls the killed
// replica had received and not answered (its debug request log counts them); while Dagu is down only
// `resource_unavailable`, and none once every replica's /readyz reports Dagu back.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, newApiKey, RAW_PROTOCOL, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, startBin } from '../../support/bin.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { DAGU_PIN, freePort } from '../../support/dagu.ts';
import { deployTool, repoPath } from '../../support/deploy-tools.ts';
import { type RunningHaproxy, startHaproxy, waitFor } from '../../support/haproxy.ts';
import { type RedisServer, startRedis } from '../../support/redis.ts';
import { RestartableDagu } from '../../support/restartable-dagu.ts';

const CALLERS = 8;
const DRAIN_MS = 1500;
/** The replica that is killed: it logs each MCP request as it begins and ends (LOG_LEVEL=debug). */
const KILLED = 1;

/**
 * The MCP calls a replica received, and those it had not answered when it died, from its request log
 * (Fastify's `incoming request` and `request completed` lines, written synchronously at debug level).
 */
function mcpCallsOf(log: string): { received: number; unanswered: number } {
  const open = new Set<string>();
  let received = 0;
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as {
      msg?: string;
      reqId?: string;
      req?: { method?: string; url?: string };
    };
    if (entry.reqId === undefined) continue;
    if (entry.msg === 'incoming request' && entry.req?.method === 'POST' && entry.req.url === '/mcp') {
      received += 1;
      open.add(entry.reqId);
    } else if (entry.msg === 'request completed') {
      open.delete(entry.reqId);
    }
  }
  return { received, unanswered: open.size };
}

interface Outcome {
  sentAt: number;
  doneAt: number;
  /** `ok`, the contract's error code, `http_<status>`, or the transport error's code. */
  result: string;
}

describe('a fleet of three replicas behind HAProxy loses nothing', () => {
  const haproxyTool = deployTool('haproxy');
  const skip = skipUnlessCI(haproxyTool.reason);
  const key = newApiKey('fleet');
  const replicas: Array<{ port: number; process?: BinProcess }> = [];
  const outcomes: Outcome[] = [];
  let haproxy: RunningHaproxy | undefined;
  let redis: RedisServer | undefined;
  let dagu: RestartableDagu | undefined;
  let home = '';
  let frontUrl = '';
  let keysFile = '';
  let calling = false;
  let callers: Array<Promise<void>> = [];

  const startReplica = async (index: number) => {
    const replica = replicas[index]!;
    replica.process = await startBin({
      env: baseEnv({
        PORT: String(replica.port),
        AUDIT_LOG: 'stderr',
        AUTH_API_KEYS_FILE: keysFile,
        DAGU_URL: dagu!.url,
        DAGU_API_BASE: DAGU_PIN.apiBase,
        DAGU_PROBE_INTERVAL_MS: '250',
        RATE_LIMIT_REDIS_URL: redis!.url,
        RATE_LIMIT_PER_MINUTE: '1000000',
        MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
        DRAIN_MS: String(DRAIN_MS),
        ...(index === KILLED ? { LOG_LEVEL: 'debug' } : {}),
      }),
    });
  };

  const allUp = () =>
    waitFor('every replica UP in HAProxy', async () =>
      Object.values(await haproxy!.serverStates('ready')).every((state) => state === 'UP'),
    );

  const call = async (): Promise<string> => {
    try {
      const response = await fetch(`${frontUrl}/mcp`, {
        method: 'POST',
        headers: {
          ...bearer(key),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': RAW_PROTOCOL,
        },
        body: JSON.stringify(toolCallBody({ target: 'dags' })),
      });
      const text = await response.text();
      if (response.status !== 200) return `http_${response.status}`;
      const body = JSON.parse(text) as {
        result?: { isError?: boolean; structuredContent?: { code?: string } };
      };
      return body.result?.isError ? (body.result.structuredContent?.code ?? 'tool_error') : 'ok';
    } catch (error) {
      return (error as { cause?: { code?: string } }).cause?.code ?? 'fetch_failed';
    }
  };

  before(async () => {
    if (skip) return;
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'fleet-test-'));
    keysFile = writeKeysFile([{ name: 'fleet', key }]);
    redis = await startRedis();
    dagu = new RestartableDagu(join(home, 'dagu'), await freePort());
    await dagu.start();
    for (let index = 0; index < 3; index += 1) replicas.push({ port: await freePort() });
    await Promise.all(replicas.map((_replica, index) => startReplica(index)));
    const [first, second, third] = replicas.map((replica) => `127.0.0.1:${replica.port}`);
    haproxy = await startHaproxy(haproxyTool.path!, home, [first!, second!, third!]);
    frontUrl = haproxy.frontUrl;
    await allUp();
  });
  after(async () => {
    calling = false;
    await Promise.all(callers);
    await haproxy?.stop();
    await Promise.all(replicas.map((replica) => replica.process?.stop()));
    await redis?.stop();
    await dagu?.stop();
    if (home !== '') rmSync(home, { recursive: true, force: true });
  });

  test('docs/replicas.md shows the HAProxy configuration this test runs', () => {
    const readme = readFileSync(repoPath('docs', 'replicas.md'), 'utf8');
    const config = readFileSync(repoPath('deploy', 'haproxy', 'haproxy.cfg'), 'utf8');
    assert.ok(readme.includes(`\`\`\`haproxy\n${config}\`\`\``), 'docs/replicas.md');
  });

  test('rolling restart, SIGKILL, Redis and Dagu restarts: the calls counted', { skip }, async () => {
    calling = true;
    callers = Array.from({ length: CALLERS }, async () => {
      while (calling) {
        const sentAt = performance.now();
        const result = await call();
        outcomes.push({ sentAt, doneAt: performance.now(), result });
      }
    });
    const since = (from: number, to = Number.POSITIVE_INFINITY) =>
      outcomes.filter((outcome) => outcome.sentAt >= from && outcome.sentAt < to);
    const failed = (list: Outcome[]) => list.filter((outcome) => outcome.result !== 'ok');
    const served = (list: Outcome[]) => list.length - failed(list).length;
    const more = async (count: number) => {
      const target = outcomes.length + count;
      await waitFor(`${count} more calls`, async () => outcomes.length >= target);
    };
    const tally = (list: Outcome[]) => {
      const counts: Record<string, number> = {};
      for (const outcome of list) counts[outcome.result] = (counts[outcome.result] ?? 0) + 1;
      return JSON.stringify(counts);
    };
    await more(50);

    // 1. Rolling restart: SIGTERM each replica in turn (it drains), start it again, wait until UP.
    const rollingFrom = performance.now();
    for (let index = 0; index < 3; index += 1) {
      const replica = replicas[index]!;
      const exited = new Promise<number | null>((done) => replica.process!.child.once('exit', done));
      replica.process!.child.kill('SIGTERM');
      assert.equal(await exited, 0, 'a drained replica exits 0');
      await startReplica(index);
      await allUp();
      await more(20);
    }
    const rollingTo = performance.now();

    // 2. SIGKILL one replica: only calls it had received and not answered may fail.
    const killed = replicas[KILLED]!;
    const closed = new Promise((done) => killed.process!.child.once('close', done));
    const killedAt = performance.now();
    killed.process!.child.kill('SIGKILL');
    // 'close': the process is gone and its output read to the end.
    await closed;
    const killedCalls = mcpCallsOf(killed.process!.stdout());
    await waitFor(
      'the killed replica DOWN',
      async () => (await haproxy!.serverStates('ready')).gateway2 === 'DOWN',
    );
    await more(20);
    const lostToKill = failed(
      outcomes.filter((outcome) => outcome.sentAt < killedAt && outcome.doneAt >= killedAt),
    );
    await startReplica(KILLED);
    await allUp();
    await more(20);

    // 3. Redis restarted: the replicas count locally meanwhile, then share again.
    const redisFrom = performance.now();
    await redis!.kill();
    await more(30);
    await redis!.restart();
    await more(30);

    // 4. Dagu restarted: `resource_unavailable` while it is down, nothing else.
    const daguFrom = performance.now();
    await dagu!.stop();
    await waitFor('a call answered resource_unavailable', async () =>
      since(daguFrom).some((outcome) => outcome.result === 'resource_unavailable'),
    );
    await more(20);
    await dagu!.start();
    const daguBackAt = performance.now();
    await waitFor('calls served again', async () =>
      since(daguBackAt).some((outcome) => outcome.result === 'ok'),
    );
    await waitFor("every replica's /readyz reporting Dagu back", async () => {
      const answers = await Promise.all(
        replicas.map((replica) =>
          fetch(`${replica.process!.address}/readyz`).then((response) => response.status),
        ),
      );
      return answers.every((status) => status === 200);
    });
    const readyAgainAt = performance.now();
    await allUp();
    await more(30);
    calling = false;
    await Promise.all(callers);
    // Contiguous phases: every call is in exactly one, by when it was sent; a call still in flight
    // when Dagu was stopped belongs to Dagu's restart.
    const beforeDagu = outcomes.filter((outcome) => outcome.doneAt < daguFrom);
    const warmUp = since(0, rollingFrom);
    const rolling = since(rollingFrom, killedAt);
    const afterKill = since(killedAt, redisFrom);
    const redisPhase = since(redisFrom).filter((outcome) => beforeDagu.includes(outcome));
    const daguPhase = outcomes.filter(
      (outcome) => outcome.sentAt >= redisFrom && !beforeDagu.includes(outcome),
    );

    const sinceReady = failed(since(readyAgainAt));
    process.stdout.write(
      `${[
        `# fleet: ${outcomes.length} calls by ${CALLERS} callers through HAProxy, ${failed(outcomes).length} not ok`,
        `#   warm-up: ${tally(warmUp)}`,
        `#   rolling restart of 3 replicas (${((rollingTo - rollingFrom) / 1000).toFixed(1)} s): ${served(rolling)} ok, ${failed(rolling).length} failed`,
        `#   SIGKILL of one replica, and its restart: ${served(afterKill)} ok after it; failed: ${lostToKill.length}, of the ${killedCalls.unanswered} calls the killed replica had received and not answered (of ${killedCalls.received} it received); ${failed(afterKill).length} sent after`,
        `#   Redis restart: ${served(redisPhase)} ok, ${failed(redisPhase).length} failed`,
        `#   Dagu restart: ${tally(daguPhase)}; once /readyz reported it back (${((readyAgainAt - daguBackAt) / 1000).toFixed(1)} s after its start): ${tally(since(readyAgainAt))}`,
      ].join('\n')}\n`,
    );
    const haproxyLog = () => haproxy!.logTail();
    assert.deepEqual(failed(warmUp), [], `warm-up: ${tally(warmUp)}`);
    assert.deepEqual(failed(rolling), [], `rolling restart: ${tally(rolling)}\n${haproxyLog()}`);
    assert.deepEqual(failed(afterKill), [], `calls sent after the SIGKILL: ${tally(afterKill)}`);
    // Its log counted its calls (a log that names none would make the bound below hold for nothing).
    assert.ok(killedCalls.received > 0, 'the killed replica logged the MCP calls it received');
    assert.ok(
      lostToKill.length <= killedCalls.unanswered,
      `${lostToKill.length} calls lost to the SIGKILL: more than the ${killedCalls.unanswered} in flight on the killed replica (${tally(lostToKill)})`,
    );
    assert.deepEqual(failed(redisPhase), [], `Redis restart: ${tally(redisPhase)}`);
    assert.deepEqual(
      failed(daguPhase).filter((outcome) => outcome.result !== 'resource_unavailable'),
      [],
      `Dagu restart: ${tally(daguPhase)}`,
    );
    assert.deepEqual(
      sinceReady,
      [],
      `calls sent once /readyz reported Dagu back: ${tally(since(readyAgainAt))}`,
    );
  });
});
