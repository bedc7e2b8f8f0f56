import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import type { AuditEntry } from '../../../src/audit/audit-log.ts';
import { auditRefusal, REFUSALS, type RefusalName, refuse } from '../../../src/http/refusals.ts';
import { clientSessionId } from '../../../src/mcp/client-session.ts';
import { ROOT } from '../../support/bin.ts';

async function answer(name: RefusalName, details: Parameters<typeof refuse>[2] = {}) {
  const app = Fastify();
  app.get('/', async (_request, reply) => refuse(reply, name, details));
  const response = await app.inject('/');
  await app.close();
  return response;
}

describe('refusals', () => {
  for (const [name, refusal] of Object.entries(REFUSALS) as Array<
    [RefusalName, (typeof REFUSALS)[RefusalName]]
  >) {
    test(`${name}: ${refusal.status}, ${refusal.shape} body, declared headers`, async () => {
      const response = await answer(name, { message: 'Why.' });
      assert.equal(response.statusCode, refusal.status);
      const body = response.json();
      if (refusal.shape === 'gateway') assert.deepEqual(body, { code: refusal.code, message: 'Why.' });
      else
        assert.deepEqual(body, {
          jsonrpc: '2.0',
          error: { code: refusal.rpcCode, message: 'Why.' },
          id: null,
        });
      for (const [header, value] of Object.entries(
        ('headers' in refusal ? refusal.headers : undefined) ?? {},
      )) {
        assert.equal(response.headers[header], value);
      }
    });
  }

  test('a refusal is audited with the client its session id names and its User-Agent, apart', async () => {
    const records: AuditEntry[] = [];
    const app = Fastify();
    app.post('/mcp', async (request, reply) => {
      auditRefusal({ record: (entry) => records.push(entry) }, request, reply, {
        outcome: 'rate_limited',
        httpStatus: 429,
      });
      return refuse(reply, 'rate_limited');
    });
    const sessionId = clientSessionId({ name: 'Cursor', version: '0.9' })!;
    for (const headers of [
      { 'mcp-session-id': sessionId, 'user-agent': 'node' },
      { 'user-agent': 'curl/8' },
    ]) {
      await app.inject({ method: 'POST', url: '/mcp?x=1', headers });
    }
    await app.close();
    assert.deepEqual(
      records.map(({ clientName, clientVersion, userAgent, path }) => [
        clientName,
        clientVersion,
        userAgent,
        path,
      ]),
      [
        ['Cursor', '0.9', 'node', '/mcp'],
        [undefined, undefined, 'curl/8', '/mcp'],
      ],
    );
  });

  test('the declared text is the default; a status and headers given with the refusal win', async () => {
    const plain = await answer('not_found');
    assert.deepEqual(plain.json(), { code: 'not_found', message: 'Not found.' });
    const tooLarge = await answer('rpc_bad_request', { status: 413, headers: { 'retry-after': '1' } });
    assert.equal(tooLarge.statusCode, 413);
    assert.equal(tooLarge.headers['retry-after'], '1');
    assert.equal(tooLarge.json().error.message, 'Bad request.');
  });

  test('no other source file answers a 4xx or 5xx of its own or builds a JSON-RPC error by hand', () => {
    const src = join(ROOT, 'src');
    const files = (function collect(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? collect(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    })(src);
    const inline = files
      .filter((file) => !file.endsWith(join('http', 'refusals.ts')))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            /\.code\(\s*[45]\d\d\s*\)|error:\s*\{\s*code:\s*-32/.test(line)
              ? [`${relative(src, file)}:${index + 1}`]
              : [],
          ),
      );
    assert.deepEqual(inline, []);
  });
});
