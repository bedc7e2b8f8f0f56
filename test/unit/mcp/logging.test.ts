/** The logging capability of the stateless server: setLevel is accepted and answered {}, checked first. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildApp, type GatewayApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { tempDir } from '../../support/temp.ts';

let gateway: GatewayApp;
before(async () => {
  // Nothing here reaches Dagu: the URL is a closed port.
  const config = loadConfig({
    HOST: '127.0.0.1',
    AUDIT_LOG: join(tempDir(), 'audit.log'),
    DAGU_URL: 'http://127.0.0.1:9',
  });
  gateway = await buildApp(config, { logger: false });
});
after(() => gateway?.close());

async function rpc(version: string, message: Record<string, unknown>) {
  const answer = await gateway.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
    },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
  });
  return answer.json() as { result?: unknown; error?: { code: number } };
}

test('initialize announces the logging capability', async () => {
  const answer = await rpc('2025-06-18', {
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  const result = answer.result as { capabilities: Record<string, unknown> };
  assert.deepEqual(result.capabilities.logging, {});
});

test('logging/setLevel with a known level is answered {}', async () => {
  for (const level of ['debug', 'warning', 'emergency']) {
    assert.deepEqual((await rpc('2025-06-18', { method: 'logging/setLevel', params: { level } })).result, {});
  }
});

test('an unknown or missing level is -32602 Invalid params', async () => {
  assert.equal(
    (await rpc('2025-06-18', { method: 'logging/setLevel', params: { level: 'loud' } })).error?.code,
    -32602,
  );
  assert.equal((await rpc('2025-06-18', { method: 'logging/setLevel', params: {} })).error?.code, -32602);
});
