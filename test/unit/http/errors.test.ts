/** Every failure answers JSON: JSON-RPC errors on the MCP path, `{code, message}` elsewhere, no detail. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { httpAnswersPlugin } from '../../../src/http/errors.ts';
import { REFUSALS } from '../../../src/http/refusals.ts';

const MCP_PATH = '/mcp';
const SECRET = 'internal detail /secret/path';

let app: FastifyInstance;
before(async () => {
  app = Fastify({ logger: false, bodyLimit: 64 });
  await app.register(httpAnswersPlugin, { mcpPath: MCP_PATH });
  for (const url of [MCP_PATH, '/other']) {
    app.post(url, async (request) => {
      const fault = (request.query as { fault?: string }).fault;
      if (fault === 'crash') throw new Error(SECRET);
      if (fault === 'client') throw Object.assign(new Error(SECRET), { statusCode: 422 });
      return { ok: true };
    });
  }
  await app.ready();
});
after(() => app.close());

const post = (url: string, payload: string) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });

describe('installErrorHandlers on the MCP path: JSON-RPC errors', () => {
  test('invalid JSON is a parse error (400) with the fixed text', async () => {
    const answer = await post(MCP_PATH, '{"jsonrpc":');
    assert.equal(answer.statusCode, 400);
    assert.deepEqual(answer.json(), {
      jsonrpc: '2.0',
      error: { code: REFUSALS.parse_error.rpcCode, message: 'Parse error: the body is not valid JSON.' },
      id: null,
    });
  });

  test('invalid UTF-8 is a parse error too, with its own text; a query string does not change the route', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: `${MCP_PATH}?x=1`,
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from([0x22, 0xc3, 0x28, 0x22]),
    });
    assert.equal(answer.statusCode, 400);
    assert.equal(answer.json().error.code, REFUSALS.parse_error.rpcCode);
    assert.equal(answer.json().error.message, 'Parse error: the body is not valid UTF-8.');
  });

  test('a body over the limit keeps its 413 and says so', async () => {
    const answer = await post(MCP_PATH, JSON.stringify({ pad: 'x'.repeat(200) }));
    assert.equal(answer.statusCode, 413);
    assert.equal(answer.json().error.code, REFUSALS.rpc_bad_request.rpcCode);
    assert.equal(answer.json().error.message, 'Request body is too large.');
  });

  test('a thrown error is a 500 internal error without its message; a client fault keeps its status', async () => {
    const crash = await post(`${MCP_PATH}?fault=crash`, '{}');
    assert.equal(crash.statusCode, 500);
    assert.equal(crash.json().error.code, REFUSALS.rpc_internal_error.rpcCode);
    assert.doesNotMatch(crash.body, /secret/);
    const client = await post(`${MCP_PATH}?fault=client`, '{}');
    assert.equal(client.statusCode, 422);
    assert.equal(client.json().error.code, REFUSALS.rpc_bad_request.rpcCode);
    assert.doesNotMatch(client.body, /secret/);
  });
});

describe('installErrorHandlers elsewhere: {code, message}', () => {
  test('invalid JSON is a plain bad request; a crash an internal error without detail', async () => {
    const bad = await post('/other', '{');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      code: 'bad_request',
      message: 'Parse error: the body is not valid JSON.',
    });
    const crash = await post('/other?fault=crash', '{}');
    assert.equal(crash.statusCode, 500);
    assert.deepEqual(crash.json(), { code: 'internal_error', message: 'Internal error.' });
  });

  test('an unknown route is not_found as JSON', async () => {
    const answer = await app.inject({ method: 'GET', url: '/nowhere' });
    assert.equal(answer.statusCode, 404);
    assert.deepEqual(answer.json(), { code: 'not_found', message: 'Not found.' });
  });
});
