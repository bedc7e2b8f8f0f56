/** The built-in authorization server's events and outcomes: bounded labels of one counter. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OAUTH_EVENTS, OAUTH_OUTCOMES, oauthOutcome } from '../../../src/core/oauth-events.ts';
import { createMetrics } from '../../../src/metrics/metrics.ts';

test('each event is exported with outcome ok at 0 before anything happens', async () => {
  const body = await createMetrics({ defaultMetrics: false }).render();
  const exported = [
    ...body.matchAll(/^mcp_gateway_oauth_events_total\{event="([^"]+)",outcome="ok"\} 0$/gm),
  ].map((match) => match[1]);
  assert.deepEqual(exported, [...OAUTH_EVENTS]);
});

test('an OAuth error code is its own outcome; anything else is other', async () => {
  assert.equal(oauthOutcome('invalid_target'), 'invalid_target');
  assert.equal(oauthOutcome('ok'), 'ok');
  assert.equal(oauthOutcome('a reason someone wrote'), 'other');
  assert.equal(oauthOutcome(undefined), 'other');
  assert.equal(new Set(OAUTH_OUTCOMES).size, OAUTH_OUTCOMES.length);
  const metrics = createMetrics({ defaultMetrics: false });
  metrics.oauthEvent('refused', oauthOutcome('invalid_client'));
  metrics.oauthEvent('refused', oauthOutcome('invalid_client'));
  assert.match(
    await metrics.render(),
    /^mcp_gateway_oauth_events_total\{event="refused",outcome="invalid_client"\} 2$/m,
  );
});
