// Input bounds through a real MCP client, the real gateway and the real Dagu (its calls counted in
// the gateway's own upstream metrics): values over their cap are refused naming the field and never
// reach Dagu; a value at its cap reaches Dagu and is answered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FIELD_MAX_LENGTH } from '../../../src/read/input/bounds.ts';
import { scrape } from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { connectModern, type RunningGateway, startGateway, type TestClient } from '../../support/gateway.ts';

let dagu: TestDagu;
let gateway: RunningGateway;
let client: TestClient;

before(async () => {
  dagu = await getTestDagu();
  gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    // Room for megabyte values, so the input bounds (not the body limit) are what refuses them.
    BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
  });
  client = await connectModern(gateway.mcpUrl);
});
after(async () => {
  await client?.close();
  await gateway?.close();
  await dagu?.stop();
});

/** Requests the gateway made to Dagu so far, readiness probes aside. */
async function upstreamCalls(): Promise<number> {
  const { samples } = await scrape(gateway.baseUrl);
  return samples
    .filter((sample) => sample.name === 'dagu_upstream_request_duration_seconds_count')
    .filter((sample) => sample.labels.route !== '/health')
    .reduce((sum, sample) => sum + sample.value, 0);
}

test('a 1 MB search and a 200,000-character name are refused naming the field, and Dagu is never called', async () => {
  const before = await upstreamCalls();
  for (const [args, field] of [
    [{ target: 'dag_search', search: 'x'.repeat(1024 * 1024) }, 'search'],
    [{ target: 'dag', name: 'n'.repeat(200_000) }, 'name'],
    [{ target: 'run', name: 'example', dagRunId: 'r'.repeat(200_000) }, 'dagRunId'],
  ] as const) {
    const result = await client.callTool(args);
    assert.equal(result.isError, true);
    const error = result.structuredContent as { code: string; field?: string; message: string };
    assert.equal(error.code, 'invalid_tool_input');
    assert.equal(error.field, field);
    assert.match(
      error.message,
      new RegExp(`^The ${field} field is \\d+ characters long; at most \\d+ are accepted\\.$`),
    );
  }
  assert.equal(await upstreamCalls(), before);
});

test('a query at its 16 KiB cap reaches Dagu and is answered', async () => {
  const before = await upstreamCalls();
  const query = `name=${'z'.repeat(FIELD_MAX_LENGTH.query - 'name='.length)}`;
  const result = await client.callTool({ target: 'dags', query });
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  assert.ok((await upstreamCalls()) > before, 'the read reached Dagu');
});
