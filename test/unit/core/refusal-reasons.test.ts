/** The bounded reasons a request is refused for: each one is a label of the refusal counter from the start. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REFUSAL_REASONS } from '../../../src/core/refusal-reasons.ts';
import { createMetrics } from '../../../src/metrics/metrics.ts';

test('distinct reasons, each exported at 0 before anything is refused, and no other', async () => {
  assert.equal(new Set(REFUSAL_REASONS).size, REFUSAL_REASONS.length);
  const body = await createMetrics({ defaultMetrics: false }).render();
  const exported = [...body.matchAll(/^mcp_gateway_refused_requests_total\{reason="([^"]+)"\} 0$/gm)].map(
    (match) => match[1],
  );
  assert.deepEqual(exported, [...REFUSAL_REASONS]);
});
