// Upstream faults a real Dagu cannot produce on demand (hang, reset, 5xx, malformed or cut bodies),
// seen through a real MCP client: each becomes the contract's error object, never a crash or a leak.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FAULTS, type FaultServer, startFaultServer } from '../../../support/fake-dagu-faults.ts';
import { connectLegacy, connectModern, type RunningGateway, startGateway } from '../../../support/gateway.ts';

let upstream: FaultServer;
let gateway: RunningGateway;

before(async () => {
  upstream = await startFaultServer();
  gateway = await startGateway({ DAGU_URL: upstream.url, DAGU_API_BASE: '/api/v1', DAGU_TIMEOUT_MS: '300' });
});
after(async () => {
  await gateway?.close();
  await upstream?.close();
});

// The fake picks its fault from a path segment, so the DAG name selects the fault.
const CASES: Array<[string, string]> = [
  [FAULTS.hang, 'resource_unavailable'],
  [FAULTS.reset, 'resource_unavailable'],
  [FAULTS.unavailable, 'resource_unavailable'],
  [FAULTS.emptyServerError, 'resource_unavailable'],
  [FAULTS.malformed, 'internal_error'],
  [FAULTS.truncated, 'internal_error'],
];

for (const [era, connect] of [
  ['modern', connectModern],
  ['legacy', connectLegacy],
] as const) {
  test(`${era} client: every upstream fault is a contract error without Dagu's paths or stacks`, async () => {
    const client = await connect(gateway.mcpUrl);
    try {
      for (const [fault, code] of CASES) {
        const started = performance.now();
        const result = await client.callTool({ target: 'dag_spec', name: fault });
        assert.equal(result.isError, true, fault);
        const error = result.structuredContent!;
        assert.equal(error.code, code, `${fault}: ${JSON.stringify(error)}`);
        assert.equal(error.target, 'dag_spec');
        assert.equal(error.uri, `dagu://dags/${fault}/spec`);
        const message = error.message as string;
        assert.ok(!message.includes('/var/lib/dagu'), `${fault} leaks a path: ${message}`);
        assert.ok(!message.includes('goroutine'), `${fault} leaks a stack: ${message}`);
        assert.ok(performance.now() - started < 5000, `${fault} is bounded by DAGU_TIMEOUT_MS`);
      }
    } finally {
      await client.close();
    }
  });
}

test('/readyz is 503 while Dagu is unreachable, /healthz stays 200', async () => {
  const unreachable = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', DAGU_TIMEOUT_MS: '300' });
  try {
    const ready = await fetch(`${unreachable.baseUrl}/readyz`);
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { checks: Array<{ name: string; ok: boolean }> };
    assert.deepEqual(
      body.checks.find((check) => check.name === 'dagu'),
      { ...body.checks.find((check) => check.name === 'dagu'), ok: false },
    );
    assert.equal((await fetch(`${unreachable.baseUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${gateway.baseUrl}/healthz`)).status, 200);
  } finally {
    await unreachable.close();
  }
});

test('the per-call deadline bounds a call even when the upstream timeout is longer', async () => {
  const strict = await startGateway({
    DAGU_URL: upstream.url,
    DAGU_TIMEOUT_MS: '60000',
    CALL_DEADLINE_MS: '300',
  });
  const client = await connectModern(strict.mcpUrl);
  try {
    const started = performance.now();
    const result = await client.callTool({ target: 'dag_spec', name: FAULTS.hang });
    assert.equal(result.structuredContent?.code, 'resource_unavailable');
    assert.ok(performance.now() - started < 5000, 'answered near the 300 ms deadline');
  } finally {
    await client.close();
    await strict.close();
  }
});
