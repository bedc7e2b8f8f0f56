/** Call metering: tool calls per minute and at once per identity, 429 with Retry-After, slots released. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concurrencyLedger, IDLE_SWEEP_AT } from '../../../src/http/call-metering.ts';
import { call, harness, KEYS_YAML, metricValue, PLAIN_KEY, VIEWER_KEY } from '../../support/auth-harness.ts';
import { tempDir, writeTemp } from '../../support/auth-helpers.ts';

describe('rate limits and concurrency', () => {
  it('limits tool calls per identity with 429 + Retry-After, never initialize or lists', async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const h = await harness({ apiKeysFile: keysFile }, { limits: { ratePerMinute: 2, maxConcurrent: 4 } });
    try {
      const viewer = `Bearer ${VIEWER_KEY}`;
      assert.equal((await call(h.app, viewer)).statusCode, 200);
      const read = { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'dagu://dags/x' } };
      assert.equal((await call(h.app, viewer, read)).statusCode, 200);
      const limited = await call(h.app, viewer);
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1 && Number(limited.headers['retry-after']) <= 60);
      assert.deepEqual(limited.json(), {
        code: 'rate_limited',
        message: 'Rate limit exceeded: at most 2 tool calls per minute per caller.',
      });
      for (const method of ['initialize', 'tools/list', 'resources/templates/list', 'ping']) {
        assert.equal((await call(h.app, viewer, { jsonrpc: '2.0', id: 3, method })).statusCode, 200, method);
      }
      assert.equal(
        (await call(h.app, `Bearer ${PLAIN_KEY}`)).statusCode,
        200,
        'another identity has its own budget',
      );
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_rate_limited_total', { reason: 'rate' }), 1);
      const denial = h.auditLines().at(-1)!;
      assert.deepEqual(
        [denial.identity, denial.method, denial.tool, denial.outcome, denial.reason, denial.http_status],
        ['ci-viewer', 'tools/call', 'dagu_read', 'rate_limited', 'rate', 429],
      );
    } finally {
      await h.app.close();
    }
  });

  it('caps concurrent calls per identity and releases the slot when the response ends', async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const h = await harness(
      { apiKeysFile: keysFile },
      { limits: { ratePerMinute: 100, maxConcurrent: 1 }, hold: true },
    );
    try {
      const viewer = `Bearer ${VIEWER_KEY}`;
      // Waits until `count` handlers are held; a call answered without reaching its handler fails.
      const reached = (count: number, pending: ReturnType<typeof call>) =>
        Promise.race([
          h.held(count),
          pending.then((answer) => assert.fail(`answered ${answer.statusCode} before its handler held it`)),
        ]);
      const first = call(h.app, viewer);
      await reached(1, first);
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_inflight_calls'), 1);
      const second = await call(h.app, viewer);
      assert.equal(second.statusCode, 429);
      assert.equal(second.headers['retry-after'], '1');
      assert.equal(second.json().code, 'rate_limited');
      const other = call(h.app, `Bearer ${PLAIN_KEY}`);
      await reached(2, other);
      h.release();
      assert.equal((await first).statusCode, 200);
      assert.equal((await other).statusCode, 200, 'the cap is per identity');
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_inflight_calls'), 0);
      const third = call(h.app, viewer);
      await reached(1, third);
      h.release();
      assert.equal((await third).statusCode, 200);
      assert.equal(
        await metricValue(h.metrics, 'mcp_gateway_rate_limited_total', { reason: 'concurrency' }),
        1,
      );
    } finally {
      await h.app.close();
    }
  });

  it('the concurrency ledger keeps an idle key at 0 and drops the idle keys together once it holds enough', () => {
    const ledger = concurrencyLedger();
    ledger.take('busy', 2);
    for (let at = 1; at < IDLE_SWEEP_AT; at += 1) {
      ledger.take(`caller-${at}`, 1);
      ledger.release(`caller-${at}`, 1);
    }
    assert.equal(ledger.running('caller-1'), 0);
    assert.equal(ledger.size, IDLE_SWEEP_AT, 'idle keys are kept until the sweep');
    ledger.take('next', 1);
    assert.equal(ledger.size, 2, 'only the busy keys are left');
    assert.equal(ledger.running('busy'), 2);
    ledger.release('busy', 1);
    ledger.release('busy', 5);
    assert.equal(ledger.running('busy'), 0, 'never below 0');
  });
});
