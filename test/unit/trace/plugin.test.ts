/** Tracing's share of the app: the provider is shut down (its spans exported) when the app closes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { tracingPlugin } from '../../../src/trace/plugin.ts';
import type { GatewayTracing } from '../../../src/trace/tracing.ts';

/** The plugin uses only `shutdown`; the rest of the tracing surface is not reached. */
function tracingWith(shutdown: () => Promise<void>): GatewayTracing {
  return { shutdown } as unknown as GatewayTracing;
}

test('closing the app shuts tracing down, once', async () => {
  let shutdowns = 0;
  const app = Fastify({ logger: false });
  await app.register(tracingPlugin, {
    tracing: tracingWith(async () => {
      shutdowns += 1;
    }),
  });
  await app.ready();
  assert.equal(shutdowns, 0);
  await app.close();
  assert.equal(shutdowns, 1);
});

test('a failed export at shutdown is logged as a warning and does not fail the close', async () => {
  const lines: string[] = [];
  const app = Fastify({
    logger: {
      level: 'warn',
      stream: {
        write: (line: string) => {
          lines.push(line);
        },
      },
    },
  });
  await app.register(tracingPlugin, {
    tracing: tracingWith(async () => {
      throw new Error('collector unreachable');
    }),
  });
  await app.ready();
  await app.close();
  const warning = lines
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .find((line) => line.level === 40);
  assert.equal(warning?.msg, 'tracing: the last spans could not be exported');
});
