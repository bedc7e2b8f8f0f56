// Both OpenAPI documents are valid OpenAPI 3.1 by a real validator (@readme/openapi-parser: JSON Schema of
// the specification plus its semantic rules, e.g. every `{param}` of a path is declared), and
// gateway.yaml's security says the truth: a route marked `security: []` answers without a credential on
// a gateway that requires one, and every other route refuses a caller without one (401).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validate } from '@readme/openapi-parser';
import { parse } from 'yaml';
import { newApiKey, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type RunningGateway, startGateway } from '../../support/gateway.ts';

const documentPath = (name: string) => fileURLToPath(new URL(`../../../openapi/${name}`, import.meta.url));

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
}
interface OpenApi {
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, Operation>>;
}

for (const name of ['dagu-subset.yaml', 'gateway.yaml']) {
  test(`openapi/${name} is a valid OpenAPI document`, async () => {
    const result = await validate(documentPath(name));
    assert.equal(result.valid, true, JSON.stringify(result, null, 2));
    assert.deepEqual(result.warnings, []);
  });
}

test('the validator is not vacuous: an undeclared path parameter and a stray key are refused', async () => {
  const broken = parse(readFileSync(documentPath('dagu-subset.yaml'), 'utf8')) as OpenApi;
  const foreach = Object.keys(broken.paths).find((path) => path.endsWith('/foreach'));
  assert.ok(foreach, 'the foreach route is documented');
  delete (broken.paths[foreach]!.get as { parameters?: unknown }).parameters;
  const missing = await validate(structuredClone(broken) as never);
  assert.equal(missing.valid, false);
  assert.match(JSON.stringify(missing), /missing path parameter/);

  const stray = parse(readFileSync(documentPath('gateway.yaml'), 'utf8')) as OpenApi;
  (stray.paths['/healthz']!.get!.responses['200'] as Record<string, unknown>)['newest first'] = null;
  assert.equal((await validate(stray as never)).valid, false);
});

const gatewayDocument = parse(readFileSync(documentPath('gateway.yaml'), 'utf8')) as OpenApi;
const KEY = newApiKey('openapi');
let gateway: RunningGateway;
before(async () => {
  gateway = await startGateway({
    DAGU_URL: 'http://127.0.0.1:9',
    DAGU_TIMEOUT_MS: '200',
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'openapi', key: KEY }]),
  });
});
after(async () => {
  await gateway?.close();
});

test('gateway.yaml requires the bearer scheme by default and marks exactly the public routes security: []', async () => {
  assert.deepEqual(gatewayDocument.security, [{ bearer: [] }]);
  const publicRoutes: string[] = [];
  for (const [path, operations] of Object.entries(gatewayDocument.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const init: RequestInit = { method: method.toUpperCase() };
      if (method === 'post') {
        init.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        init.body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      }
      const response = await fetch(`${gateway.baseUrl}${path}`, init);
      await response.arrayBuffer();
      const route = `${method.toUpperCase()} ${path}`;
      const isPublic = operation.security !== undefined && operation.security.length === 0;
      if (isPublic) {
        publicRoutes.push(route);
        assert.notEqual(response.status, 401, `${route} is marked public but wants a credential`);
        assert.notEqual(response.status, 403, `${route} is marked public but refused`);
      } else {
        assert.equal(
          response.status,
          401,
          `${route} needs a credential by the document, answered ${response.status}`,
        );
      }
    }
  }
  assert.ok(
    publicRoutes.includes('GET /healthz') && publicRoutes.includes('GET /metrics'),
    String(publicRoutes),
  );
});
