// openapi/gateway.yaml describes the HTTP surface that really exists: every documented route answers
// with a documented status, and JSON error bodies have the documented shape.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { type RunningGateway, startGateway } from '../../support/gateway.ts';

interface Operation {
  responses: Record<string, unknown>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

const document = parse(
  readFileSync(new URL('../../../openapi/gateway.yaml', import.meta.url), 'utf8'),
) as OpenApi;
const ajv = new Ajv2020({ strict: false });
ajv.addSchema({ $id: 'gateway', components: document.components });
const httpError = ajv.getSchema('gateway#/components/schemas/HttpError')!;

let gateway: RunningGateway;
before(async () => {
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', DAGU_TIMEOUT_MS: '200' });
});
after(async () => {
  await gateway?.close();
});

test('every documented route and method answers with a documented status', async () => {
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const init: RequestInit = { method: method.toUpperCase() };
      if (method === 'post') {
        init.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        init.body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      }
      const response = await fetch(`${gateway.baseUrl}${path}`, init);
      await response.arrayBuffer();
      assert.ok(
        String(response.status) in operation.responses,
        `${method.toUpperCase()} ${path} answered ${response.status}, documented: ${Object.keys(operation.responses)}`,
      );
    }
  }
});

test('HTTP-level refusals carry the documented error object', async () => {
  const origin = await fetch(`${gateway.baseUrl}/healthz`, { headers: { origin: 'https://evil.example' } });
  assert.equal(origin.status, 403);
  assert.ok(httpError(await origin.json()), ajv.errorsText(httpError.errors));
  const missing = await fetch(`${gateway.baseUrl}/nowhere`);
  assert.ok(httpError(await missing.json()), ajv.errorsText(httpError.errors));
});
