// The workbook pool's per-caller share through the real gateway: each API key is a caller. One key's
// slow encrypted reads fill its share (one worker, one waiting place), so its next read is refused at
// once as busy, while another key's read is served; the pool metrics show it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { calibrateHashRates } from '../../../src/workbook/key-derivation.ts';
import { bearer, metricSum, newApiKey, scrape, writeKeysFile } from '../../support/auth-fixtures.ts';
import { CONNECTORS, type RunningGateway, startGateway, type TestClient } from '../../support/gateway.ts';
import { fixtureDir, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { encryptAgile, withSpinCount } from '../../support/workbook-fixtures-crypto.ts';

const KEYS = { a: newApiKey('poola'), b: newApiKey('poolb') };
let gateway: RunningGateway;
let dir: string;
let cleanup: () => Promise<void>;
const clients: TestClient[] = [];

before(async () => {
  ({ dir, cleanup } = await fixtureDir('workbook-pool-e2e'));
  const small = await writeSmallWorkbook(join(dir, 'cities.xlsx'));
  // Wrong passwords run two key derivations: about 20 s at this machine's rate, cut short by the
  // call deadline when the test ends.
  const spinCount = Math.round((20_000 * calibrateHashRates().SHA512) / 2);
  writeFileSync(join(dir, 'slow.xlsx'), withSpinCount(encryptAgile(readFileSync(small), 'pw'), spinCount));
  gateway = await startGateway({
    DAGU_URL: 'http://127.0.0.1:9',
    WORKBOOK_ROOTS: dir,
    WORKBOOK_MAX_CONCURRENT: '2',
    WORKBOOK_QUEUE_MAX: '2',
    WORKBOOK_MAX_SPIN_COUNT: '10000000',
    WORKBOOK_DEADLINE_MS: '120000',
    CALL_DEADLINE_MS: '60000',
    AUTH_API_KEYS_FILE: writeKeysFile([
      { name: 'pool-a', key: KEYS.a },
      { name: 'pool-b', key: KEYS.b },
    ]),
  });
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await gateway?.close();
  await cleanup?.();
});

async function pool(): Promise<{ busy: number; queued: number; queueFull: number }> {
  const { samples } = await scrape(gateway.baseUrl);
  return {
    busy: metricSum(samples, 'mcp_gateway_workbook_workers_busy'),
    queued: metricSum(samples, 'mcp_gateway_workbook_queue_length'),
    queueFull: metricSum(samples, 'mcp_gateway_workbook_rejected_total', { reason: 'queue_full' }),
  };
}

test("one key's slow reads fill only its share: its next read is refused as busy, another key's is served", async () => {
  const [a, b] = await Promise.all([
    CONNECTORS.modern(gateway.mcpUrl, bearer(KEYS.a)),
    CONNECTORS.modern(gateway.mcpUrl, bearer(KEYS.b)),
  ]);
  clients.push(a, b);
  const slow = { target: 'workbook', path: 'slow.xlsx', password: 'not the password' };
  const slowReads = [a.callTool(slow), a.callTool(slow)].map((call) => call.catch((error: unknown) => error));
  const started = performance.now();
  while ((await pool()).queued < 1) {
    assert.ok(performance.now() - started < 30_000, "a's reads never filled its share");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await pool(), { busy: 1, queued: 1, queueFull: 0 });

  const refused = await a.callTool(slow);
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent?.code, 'resource_unavailable');
  assert.match(
    String(refused.structuredContent?.message),
    /^slow\.xlsx: the workbook reader is busy \(1 reads of this caller already waiting\); try again later$/,
  );

  const served = await b.callTool({ target: 'workbook', path: 'cities.xlsx' });
  assert.notEqual(served.isError, true, JSON.stringify(served.structuredContent));
  const data = served.structuredContent?.data as { sheets: unknown[] } | undefined;
  assert.equal(data?.sheets.length, 1);
  assert.deepEqual(await pool(), { busy: 1, queued: 1, queueFull: 1 });
  // a's slow reads end when the gateway closes; their outcome is not what this test is about.
  void Promise.all(slowReads);
});
