/** `/metrics` answers the exposition the metrics give for the scrape's Accept header, as they give it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { metricsRoutePlugin } from '../../../src/http/metrics-route.ts';

test('/metrics passes the Accept header on and answers the content type and body it gets back', async () => {
  const accepts: Array<string | undefined> = [];
  const metrics = {
    exposition: async (accept: string | undefined) => {
      accepts.push(accept);
      return accept?.includes('openmetrics')
        ? { contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8', body: 'om 1\n# EOF\n' }
        : { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: 'plain 1\n' };
    },
  };
  const app = Fastify();
  await app.register(metricsRoutePlugin, { metrics });
  try {
    const plain = await app.inject({ url: '/metrics' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(plain.body, 'plain 1\n');
    const open = await app.inject({ url: '/metrics', headers: { accept: 'application/openmetrics-text' } });
    assert.equal(open.headers['content-type'], 'application/openmetrics-text; version=1.0.0; charset=utf-8');
    assert.equal(open.body, 'om 1\n# EOF\n');
    assert.deepEqual(accepts, [undefined, 'application/openmetrics-text']);
  } finally {
    await app.close();
  }
});
