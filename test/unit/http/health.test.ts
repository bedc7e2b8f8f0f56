import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import Fastify from 'fastify';
import {
  createDaguReadiness,
  type DaguProbeResult,
  type DaguReadiness,
} from '../../../src/dagu/readiness.ts';
import { healthPlugin } from '../../../src/http/health.ts';
import { recordingLog } from '../../support/auth-helpers.ts';

const UP: DaguProbeResult = { reachable: true, version: 'v2.15.1', apiBase: '/api/v1', generation: 2 };
const DOWN: DaguProbeResult = { reachable: false, detail: 'Dagu is unreachable. (ECONNREFUSED)' };

let open: DaguReadiness[] = [];
afterEach(() => {
  for (const readiness of open) readiness.close();
  open = [];
});

describe('/healthz and /readyz', () => {
  async function serve(snapshot: DaguProbeResult, checks: Array<{ ok: boolean; detail?: string }> = []) {
    const app = Fastify();
    const readiness = createDaguReadiness({
      probe: async () => snapshot,
      url: 'http://dagu:8080',
      log: recordingLog(),
      timeoutMs: 100,
      intervalMs: 0,
    });
    open.push(readiness);
    await app.register(healthPlugin, {
      dagu: readiness,
      checks: checks.map((result, i) => ({ name: `local${i}`, check: async () => result })),
    });
    return app;
  }

  test('ready: 200 with what is known of Dagu', async () => {
    const app = await serve(UP, [{ ok: true }]);
    const response = await app.inject('/readyz');
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.status, 'ready');
    assert.equal(body.reason, undefined);
    assert.equal(body.dagu.version, 'v2.15.1');
    assert.deepEqual(body.checks, [
      { name: 'dagu', ok: true },
      { name: 'local0', ok: true },
    ]);
    await app.close();
  });

  test('a Dagu that does not fit: 503 with the problem as the reason, and the version found', async () => {
    const app = await serve({ ...UP, problem: 'DAGU_API_BASE=/api/v2 does not fit' });
    const response = await app.inject('/readyz');
    assert.equal(response.statusCode, 503);
    const body = response.json();
    assert.equal(body.reason, 'dagu: DAGU_API_BASE=/api/v2 does not fit');
    assert.equal(body.dagu.version, 'v2.15.1');
    await app.close();
  });

  test('not ready: 503 with every failed check in the reason; /healthz stays 200', async () => {
    const app = await serve(DOWN, [{ ok: false, detail: 'ENOSPC' }]);
    const response = await app.inject('/readyz');
    assert.equal(response.statusCode, 503);
    const body = response.json();
    assert.equal(body.status, 'not_ready');
    assert.equal(body.reason, 'dagu: Dagu is unreachable. (ECONNREFUSED); local0: ENOSPC');
    assert.equal(body.dagu.url, 'http://dagu:8080');
    assert.equal((await app.inject('/healthz')).statusCode, 200);
    await app.close();
  });
});
