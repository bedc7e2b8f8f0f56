import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { deferredRequestLogger } from '../../../src/http/request-logger.ts';

/** A Fastify app at `info` whose server-level child factory counts its calls, with one route at `warn`. */
async function appWithQuietRoute(warn: boolean) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const app: FastifyInstance = Fastify({ logger: { level: 'info', stream } });
  let children = 0;
  app.setChildLoggerFactory((logger, bindings, options) => {
    children += 1;
    return logger.child(bindings, options);
  });
  app.post(
    '/quiet',
    { logLevel: 'warn', childLoggerFactory: deferredRequestLogger(app, 'warn')! },
    async (request) => {
      request.log.info('an info line of the route');
      if (warn) request.log.warn({ detail: 'x' }, 'a warning of the route');
      return { id: request.id };
    },
  );
  app.get('/loud', async () => 'ok');
  await app.ready();
  return { app, lines, children: () => children };
}

describe('deferredRequestLogger', () => {
  it('is only used on a route whose level drops info lines', () => {
    const app = Fastify();
    for (const level of ['warn', 'error', 'fatal', 'silent'] as const)
      assert.notEqual(deferredRequestLogger(app, level), undefined, level);
    for (const level of ['info', 'debug', 'trace'] as const)
      assert.equal(deferredRequestLogger(app, level), undefined, level);
    assert.equal(deferredRequestLogger(app, undefined), undefined);
  });

  it('writes no info line and makes no child logger for a request that logs no warning', async () => {
    const { app, lines, children } = await appWithQuietRoute(false);
    assert.equal((await app.inject({ method: 'POST', url: '/quiet' })).statusCode, 200);
    assert.equal(lines.length, 0);
    assert.equal(children(), 0);
    // Another route still gets the server's child logger and its request lines.
    await app.inject({ method: 'GET', url: '/loud' });
    assert.equal(children(), 1);
    assert.deepEqual(
      lines.map((line) => line.msg),
      ['incoming request', 'request completed'],
    );
    await app.close();
  });

  it("writes a warning through the server's child factory, with the request id", async () => {
    const { app, lines, children } = await appWithQuietRoute(true);
    const response = await app.inject({ method: 'POST', url: '/quiet' });
    const { id } = response.json<{ id: string }>();
    assert.equal(children(), 1);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'a warning of the route');
    assert.equal(lines[0]!.level, 40);
    assert.equal(lines[0]!.reqId, id);
    assert.equal(lines[0]!.detail, 'x');
    await app.close();
  });
});
