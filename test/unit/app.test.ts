/**
 * The HTTP gateway as buildApp assembles it, driven through Fastify's inject (no socket, no Dagu: the
 * Dagu URL is a closed port). What is checked is the assembly: which plugin answers what, in which
 * order, with which side effects in the metrics and the audit log.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { buildApp, type GatewayApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { RAW_PROTOCOL, toolCallBody } from '../support/auth-fixtures.ts';
import { tempDir } from '../support/temp.ts';

const CLOSED_PORT_DAGU = 'http://127.0.0.1:9';
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': RAW_PROTOCOL,
};

describe('an anonymous gateway on loopback', () => {
  let gateway: GatewayApp;
  let auditPath: string;
  const logLines: string[] = [];
  before(async () => {
    auditPath = join(tempDir(), 'audit.log');
    const config = loadConfig({
      HOST: '127.0.0.1',
      AUDIT_LOG: auditPath,
      DAGU_URL: CLOSED_PORT_DAGU,
      BODY_LIMIT_BYTES: '2048',
    });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    gateway = await buildApp(config, { logger: { level: 'info', stream } });
  });
  after(() => gateway?.close());

  const rpc = (payload: unknown) =>
    gateway.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: MCP_HEADERS,
      payload: JSON.stringify(payload),
    });

  test('health, metadata and unknown routes answer JSON', async () => {
    assert.deepEqual((await gateway.app.inject({ url: '/healthz' })).json(), { status: 'ok' });
    const metadata = await gateway.app.inject({ url: '/.well-known/oauth-protected-resource/mcp' });
    assert.equal(metadata.json().resource, 'http://localhost:80/mcp');
    const missing = await gateway.app.inject({ url: '/nowhere' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { code: 'not_found', message: 'Not found.' });
  });

  test('GET and DELETE on the MCP endpoint are 405 before any body is read (a session-ending DELETE)', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      // Clients ending the session their initialize was given send DELETE with the JSON content type.
      const response = await gateway.app.inject({
        method,
        url: '/mcp',
        headers: { 'content-type': 'application/json', 'mcp-session-id': 'c1.e30.x' },
      });
      assert.equal(response.statusCode, 405, method);
      assert.equal(response.headers.allow, 'POST');
    }
  });

  test('the MCP route lists the one tool and answers the contract error object for bad input', async () => {
    const list = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual(
      list.json().result.tools.map((tool: { name: string }) => tool.name),
      ['dagu_read'],
    );
    const bad = (await rpc(toolCallBody({ target: 'nope' }, 2))).json();
    assert.equal(bad.result.isError, true);
    assert.equal(bad.result.structuredContent.code, 'unsupported_read_target');
  });

  test('Dagu unreachable is resource_unavailable, not a crash', async () => {
    const answer = (await rpc(toolCallBody({ target: 'dags' }, 3))).json();
    assert.deepEqual(answer.result.structuredContent, {
      code: 'resource_unavailable',
      message: 'Dagu is unreachable.',
      target: 'dags',
    });
  });

  test('an unknown method is -32601, counted as refused and audited under a bounded reason', async () => {
    const answer = await rpc({ jsonrpc: '2.0', id: 4, method: 'no/such' });
    assert.equal(answer.json().error.code, -32601);
    const metrics = await gateway.app.inject({ url: '/metrics' });
    assert.match(metrics.body, /^mcp_gateway_refused_requests_total\{reason="unknown_method"\} 1$/m);
  });

  test('a body over BODY_LIMIT_BYTES is a 413 JSON-RPC error', async () => {
    const answer = await rpc({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/list',
      params: { pad: 'x'.repeat(3000) },
    });
    assert.equal(answer.statusCode, 413);
    assert.equal(answer.json().error.message, 'Request body is too large.');
  });

  test('request log lines carry the path without its query string', async () => {
    await gateway.app.inject({ url: '/healthz?token=leaked-secret' });
    const text = logLines.join('');
    assert.match(text, /"url":"\/healthz"/);
    assert.doesNotMatch(text, /leaked-secret/);
  });

  test('concurrent tool calls are answered only once their audit records are in the file', async () => {
    // Two calls in flight at once (Dagu's port refuses after an I/O turn): the second's record is
    // queued with the turn's others, and its answer waits for their write.
    const recordsWhenAnswered: number[] = [];
    const call = (id: number) =>
      rpc(toolCallBody({ target: 'dags' }, id)).then((answer) => {
        // Read at once, as the answer arrives.
        const unavailable = readFileSync(auditPath, 'utf8')
          .trim()
          .split('\n')
          .filter((line) => line.includes('"outcome":"resource_unavailable"'));
        recordsWhenAnswered.push(unavailable.length);
        return answer.json().result.structuredContent.code as string;
      });
    assert.deepEqual(await Promise.all([call(6), call(7)]), ['resource_unavailable', 'resource_unavailable']);
    // The earlier test's call left one such record; each answer found its own (the first, maybe both).
    assert.ok(recordsWhenAnswered[0]! >= 2, `first answer saw ${recordsWhenAnswered[0]} records`);
    assert.equal(recordsWhenAnswered[1], 3);
  });

  test('the audit log holds the calls and the refused message (read after close)', async () => {
    await gateway.close();
    const records = readFileSync(auditPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const summary = records.map((record) => [record.event, record.outcome]);
    assert.deepEqual(summary, [
      ['mcp.tool_call', 'unsupported_read_target'],
      ['mcp.tool_call', 'resource_unavailable'],
      ['mcp.request_denied', 'unknown_method'],
      ['mcp.tool_call', 'resource_unavailable'],
      ['mcp.tool_call', 'resource_unavailable'],
    ]);
    assert.equal(records[2]!.method, 'no/such');
  });
});

describe('a gateway with JWT authentication', () => {
  test('authentication answers before the body is parsed: a broken body without a bearer is 401', async () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      AUDIT_LOG: join(tempDir(), 'audit.log'),
      DAGU_URL: CLOSED_PORT_DAGU,
      AUTH_JWT_SECRET: 'x'.repeat(40),
    });
    const gateway = await buildApp(config, { logger: false });
    try {
      const answer = await gateway.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: MCP_HEADERS,
        payload: '{broken',
      });
      assert.equal(answer.statusCode, 401);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer /);
      assert.equal(answer.json().code, 'unauthenticated');
    } finally {
      await gateway.close();
    }
  });
});

describe('the Host/Origin check and PUBLIC_URL', () => {
  test('the gateway’s own origin passes (its pages post from there); another origin is still refused', async () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      AUDIT_LOG: join(tempDir(), 'audit.log'),
      DAGU_URL: CLOSED_PORT_DAGU,
      PUBLIC_URL: 'https://gateway.example',
      ALLOWED_HOSTS: 'gateway.example',
      AUTH_ALLOW_ANONYMOUS: 'true',
    });
    const gateway = await buildApp(config, { logger: false });
    try {
      const from = (origin: string) =>
        gateway.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'gateway.example', origin } });
      assert.equal((await from('https://gateway.example')).statusCode, 200);
      const other = await from('https://host.example');
      assert.equal(other.statusCode, 403);
      assert.equal(other.json().code, 'invalid_origin');
      assert.equal(
        (await from('http://gateway.example')).statusCode,
        403,
        'the scheme is part of the origin',
      );
    } finally {
      await gateway.close();
    }
  });
});
