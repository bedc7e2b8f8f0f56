// Replicas share one rate limit through a real Redis: two gateway processes (the package's bin) give
// one caller one budget with RATE_LIMIT_REDIS_URL, and one budget each without it. When Redis dies
// the gateways keep serving with a local limit, say so in the log and the metrics, and go back to
// the shared count when Redis returns.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, metricSum, newApiKey, postMcp, scrape, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, startBin } from '../../support/bin.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { type RedisServer, startRedis } from '../../support/redis.ts';

const LIMIT = 6;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let dagu: TestDagu;
let redis: RedisServer;
const KEYS = { shared: newApiKey('shared'), alone: newApiKey('alone'), fallback: newApiKey('fallback') };
let keysFile: string;
const running: BinProcess[] = [];

before(async () => {
  ensureBuilt();
  dagu = await getTestDagu();
  redis = await startRedis();
  keysFile = writeKeysFile([
    { name: 'shared-caller', key: KEYS.shared },
    { name: 'alone-caller', key: KEYS.alone },
    { name: 'fallback-caller', key: KEYS.fallback },
  ]);
});
after(async () => {
  await Promise.all(running.map((gateway) => gateway.stop()));
  await redis?.stop();
  await dagu?.stop();
});

async function gateway(extra: Record<string, string> = {}): Promise<BinProcess> {
  const started = await startBin({
    env: baseEnv({
      PORT: '0',
      AUDIT_LOG: 'stderr',
      AUTH_API_KEYS_FILE: keysFile,
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      ...extra,
    }),
  });
  running.push(started);
  return started;
}

/** `calls` tool calls by one caller, alternating between the gateways; the statuses per gateway. */
async function spread(gateways: BinProcess[], key: string, calls: number): Promise<number[][]> {
  const statuses: number[][] = gateways.map(() => []);
  for (let call = 0; call < calls; call += 1) {
    const index = call % gateways.length;
    statuses[index]!.push((await postMcp(gateways[index]!.mcpUrl, bearer(key))).status);
  }
  return statuses;
}

const served = (statuses: number[][]) => statuses.flat().filter((status) => status === 200).length;
const refused = (statuses: number[][]) => statuses.flat().filter((status) => status === 429).length;

const storeGauge = async (gateway: BinProcess, store: 'redis' | 'local') =>
  metricSum((await scrape(gateway.address)).samples, 'mcp_gateway_rate_limit_store', { store });

describe(`one caller, two replicas, RATE_LIMIT_PER_MINUTE=${LIMIT}`, () => {
  let first: BinProcess;
  let second: BinProcess;
  before(async () => {
    [first, second] = await Promise.all([
      gateway({ RATE_LIMIT_REDIS_URL: redis.url }),
      gateway({ RATE_LIMIT_REDIS_URL: redis.url }),
    ]);
    for (const replica of [first, second]) {
      const deadline = Date.now() + 10_000;
      while ((await storeGauge(replica, 'redis')) !== 1) {
        assert.ok(Date.now() < deadline, `never connected to Redis:\n${replica.stdout()}`);
        await sleep(50);
      }
    }
  });

  test('with Redis: calls spread over both replicas are limited as one budget', async () => {
    const statuses = await spread([first, second], KEYS.shared, LIMIT * 2);
    assert.equal(served(statuses), LIMIT, JSON.stringify(statuses));
    assert.equal(refused(statuses), LIMIT, JSON.stringify(statuses));
    // Both replicas served and both refused: the count is shared, not split.
    for (const replica of statuses) {
      assert.ok(replica.includes(200) && replica.includes(429), JSON.stringify(statuses));
    }
    assert.equal(await storeGauge(first, 'local'), 0);
  });

  test('without Redis: each replica limits alone, so the caller gets one budget per replica', async () => {
    const alone = await Promise.all([gateway(), gateway()]);
    const statuses = await spread(alone, KEYS.alone, LIMIT * 3);
    assert.equal(served(statuses), LIMIT * 2, JSON.stringify(statuses));
    assert.equal(await storeGauge(alone[0]!, 'local'), 1);
    await Promise.all(alone.map((replica) => replica.stop()));
  });

  test('Redis gone: both keep serving with a local limit, log it once and show it in the metrics; back when Redis is', async () => {
    await redis.kill();
    // Each replica now limits alone: LIMIT calls each are served, the next ones refused.
    const statuses = await spread([first, second], KEYS.fallback, LIMIT * 2 + 2);
    assert.equal(served(statuses), LIMIT * 2, JSON.stringify(statuses));
    assert.equal(refused(statuses), 2, JSON.stringify(statuses));
    for (const replica of [first, second]) {
      const { samples } = await scrape(replica.address);
      assert.equal(metricSum(samples, 'mcp_gateway_rate_limit_store', { store: 'local' }), 1);
      assert.equal(metricSum(samples, 'mcp_gateway_rate_limit_store', { store: 'redis' }), 0);
      assert.ok(metricSum(samples, 'mcp_gateway_rate_limit_store_fallbacks_total') >= LIMIT);
      const warnings = replica
        .stdout()
        .split('\n')
        .filter((line) => line.includes('Redis unavailable'));
      assert.equal(warnings.length, 1, replica.stdout());
      assert.equal((JSON.parse(warnings[0]!) as { level: number }).level, 40);
    }

    await redis.restart();
    for (const replica of [first, second]) {
      const deadline = Date.now() + 15_000;
      while ((await storeGauge(replica, 'redis')) !== 1) {
        assert.ok(Date.now() < deadline, `did not return to Redis:\n${replica.stdout()}`);
        await sleep(100);
      }
      const counting = replica
        .stdout()
        .split('\n')
        .filter((line) => line.includes('counting in Redis'));
      assert.equal(counting.length, 2, 'logged at start and once on return');
    }
    // The restarted Redis is empty: a shared budget again, starting afresh.
    const again = await spread([first, second], KEYS.fallback, LIMIT + 1);
    assert.equal(served(again), LIMIT, JSON.stringify(again));
  });
});
