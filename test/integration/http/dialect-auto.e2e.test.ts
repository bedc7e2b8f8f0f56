// DAGU_API_BASE=auto against the real Dagu of the run (1.30 or 2.x; the runner reads both): started
// with nothing but DAGU_URL, the gateway finds the REST dialect from Dagu's health routes, logs the
// version found, reports it on /readyz, and serves `dags` and `run`. An explicit base of the other
// generation still wins, and /readyz then answers 503 with the reason.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { connectModern } from '../../support/gateway.ts';

type Data = Record<string, unknown>;

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

/** The version the Dagu of this run reports on its own health route. */
async function reportedVersion(): Promise<string> {
  const response = await fetch(`${dagu.url}${dagu.apiBase}/health`);
  return String(((await response.json()) as { version?: unknown }).version);
}

async function readyz(gateway: CapturedGateway) {
  const response = await fetch(`${gateway.baseUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as Data & { dagu: Data } };
}

describe('DAGU_URL alone (DAGU_API_BASE=auto)', () => {
  let gateway: CapturedGateway;
  before(async () => {
    gateway = await startCapturedGateway({ DAGU_URL: dagu.url }, { logLevel: 'info' });
  });
  after(() => gateway?.close());

  test('serves dags and run of the real Dagu', async () => {
    const client = await connectModern(gateway.mcpUrl);
    try {
      const dags = await client.callTool({ target: 'dags', query: 'perPage=200' });
      assert.notEqual(dags.isError, true, JSON.stringify(dags.structuredContent));
      const data = dags.structuredContent?.data as Data;
      const names = (data.items as Data[]).map((item) => item.name);
      for (const name of [dagu.seed.dags.twoSteps, dagu.seed.dags.fails])
        assert.ok(names.includes(name), name);
      assert.equal(typeof data.pagination, 'object');

      const run = await client.callTool({
        target: 'run',
        name: dagu.seed.dags.twoSteps,
        dagRunId: dagu.seed.runs.twoStepsFirst,
      });
      assert.notEqual(run.isError, true, JSON.stringify(run.structuredContent));
      const details = run.structuredContent?.data as Data;
      assert.equal(details.dagRunId, dagu.seed.runs.twoStepsFirst);
      assert.equal(details.statusLabel, 'succeeded');
      assert.deepEqual(
        (details.steps as Data[]).map((step) => step.name),
        dagu.seed.facts.twoStepsStepNames,
      );
    } finally {
      await client.close();
    }
  });

  test('/readyz reports the version and the REST base found, and the log names them', async () => {
    const { status, body } = await readyz(gateway);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.dagu.version, await reportedVersion());
    assert.equal(body.dagu.apiBase, dagu.apiBase);
    assert.equal(body.dagu.generation, dagu.generation);
    // The start log names what was found. (On a loaded machine the very first probe may time out: then
    // the finding is logged as 'Dagu is reachable again' after one 'Dagu is unreachable'.)
    const found = gateway
      .logText()
      .split('\n')
      .filter(
        (line) => line.includes('"msg":"Dagu found"') || line.includes('"msg":"Dagu is reachable again"'),
      )
      .map((line) => JSON.parse(line) as Data);
    assert.ok(found.length >= 1, gateway.logText());
    assert.equal(found.at(-1)?.version, body.dagu.version);
    assert.equal(found.at(-1)?.apiBase, dagu.apiBase);
  });
});

test('an explicit DAGU_API_BASE of the other generation still wins, and /readyz says why it does not fit', async () => {
  const other = dagu.apiBase === '/api/v1' ? '/api/v2' : '/api/v1';
  const gateway = await startCapturedGateway({ DAGU_URL: dagu.url, DAGU_API_BASE: other });
  try {
    const { status, body } = await readyz(gateway);
    assert.equal(status, 503);
    assert.match(String(body.reason), new RegExp(`^dagu: DAGU_API_BASE=${other.replaceAll('/', '\\/')} `));
    assert.match(
      String(body.reason),
      new RegExp(dagu.apiBase.replaceAll('/', '\\/')),
      'names the base that fits',
    );
    assert.equal(body.dagu.apiBase, other);
  } finally {
    await gateway.close();
  }
});
