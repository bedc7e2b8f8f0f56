// Tracing off costs nothing: with no OTEL_* variable set, building the HTTP gateway and serving a call
// loads no module of src/trace/ and no @opentelemetry package (recorded by the ESM loader hook of
// test/support/record-modules.mjs); with an endpoint set, both are loaded (the recording works).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../support/temp.ts';

const ROOT = join(import.meta.dirname, '../../..');

const SCRIPT = `
import { buildApp } from './src/app.ts';
import { loadConfig } from './src/config.ts';
const config = loadConfig({ ...process.env, AUTH_ALLOW_ANONYMOUS: 'true', AUDIT_LOG: 'stderr', DAGU_PROBE_INTERVAL_MS: '0' });
const gateway = await buildApp(config, { logger: false });
const answer = await gateway.app.inject({
  method: 'POST', url: '/mcp',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: '127.0.0.1' },
  payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dagu_read', arguments: { target: 'references' } } },
});
if (answer.statusCode !== 200) throw new Error('the call failed: ' + answer.body);
await gateway.close();
`;

function loadedModules(env: Record<string, string>): string[] {
  const file = join(tempDir('trace-modules-'), 'modules.txt');
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', './test/support/record-modules.mjs', '--input-type=module', '-e', SCRIPT],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECORD_MODULES_FILE: file, ...env },
    },
  );
  assert.equal(run.status, 0, run.stderr);
  return readFileSync(file, 'utf8').split('\n');
}

const tracingModules = (modules: string[]) =>
  modules.filter((url) => /\/node_modules\/@opentelemetry\/|\/src\/trace\//.test(url));

test('with no OTEL_* variable, no tracing module is loaded', () => {
  const modules = loadedModules({});
  assert.ok(modules.some((url) => url.endsWith('/src/gateway-core.ts')));
  assert.deepEqual(tracingModules(modules), []);
});

test('OTEL_SDK_DISABLED=true keeps tracing off even with an endpoint', () => {
  const modules = loadedModules({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    OTEL_SDK_DISABLED: 'true',
  });
  assert.deepEqual(tracingModules(modules), []);
});

test('with an OTLP endpoint, the tracing modules are loaded', () => {
  const modules = loadedModules({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    OTEL_BSP_EXPORT_TIMEOUT: '200',
  });
  assert.ok(modules.some((url) => url.endsWith('/src/trace/tracing.ts')));
  assert.ok(modules.some((url) => url.includes('/node_modules/@opentelemetry/sdk-trace/')));
});
