/** The bounded reasons authentication fails for: each one is a label of the auth-failure counter from the start. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUTH_FAILURE_REASONS } from '../../../src/core/auth-reasons.ts';
import { createMetrics } from '../../../src/metrics/metrics.ts';

test('distinct reasons, each exported at 0 before anything is refused, and no other', async () => {
  assert.equal(new Set(AUTH_FAILURE_REASONS).size, AUTH_FAILURE_REASONS.length);
  const body = await createMetrics({ defaultMetrics: false }).render();
  const exported = [...body.matchAll(/^mcp_gateway_auth_failures_total\{reason="([^"]+)"\} 0$/gm)].map(
    (match) => match[1],
  );
  assert.deepEqual(exported, [...AUTH_FAILURE_REASONS]);
});
