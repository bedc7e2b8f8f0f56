// The transport under the Dagu client, against a plain node:http server on 127.0.0.1 that answers,
// stalls or cuts a body short on demand (faults a real Dagu does not produce when asked).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Pool } from 'undici';
import { dispatchGet, failureOf, TransportFailure } from '../../../src/dagu/dispatch.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
const routes = new Map<string, Handler>([
  ['/ok', (_request, response) => response.end('{"a":1}')],
  [
    '/chunks',
    (_request, response) => {
      response.write('{"lines":[');
      setImmediate(() => response.end('"x"]}'));
    },
  ],
  ['/status', (_request, response) => response.writeHead(404).end('{"message":"not found"}')],
  ['/headers', (request, response) => response.end(JSON.stringify(request.headers))],
  ['/stall', () => {}],
  [
    '/cut',
    (_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('{"partial":');
      setImmediate(() => response.destroy());
    },
  ],
]);

let server: Server;
let pool: Pool;
before(async () => {
  server = createServer((request, response) => routes.get(request.url ?? '')?.(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
after(async () => {
  await pool.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, timeoutMs = 5000, signal?: AbortSignal) =>
  dispatchGet(pool, path, { accept: 'application/json', 'x-probe': 'yes' }, timeoutMs, signal);

async function failure(promise: Promise<unknown>): Promise<TransportFailure> {
  const error = await promise.then(
    () => assert.fail('the GET succeeded'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof TransportFailure, String(error));
  return error;
}

describe('dispatchGet', () => {
  test('gathers a whole body, in one chunk or several, with its status and the headers sent', async () => {
    assert.deepEqual(await get('/ok'), { status: 200, text: '{"a":1}' });
    assert.deepEqual(await get('/chunks'), { status: 200, text: '{"lines":["x"]}' });
    assert.deepEqual(await get('/status'), { status: 404, text: '{"message":"not found"}' });
    const echoed = JSON.parse((await get('/headers')).text) as Record<string, string>;
    assert.equal(echoed['x-probe'], 'yes');
  });

  test('a server that never answers is aborted at its timeout', async () => {
    const stalled = await failure(get('/stall', 50));
    assert.deepEqual([stalled.kind, stalled.aborted], ['no_answer', 'timeout']);
    const { outcome, error } = failureOf(stalled, undefined);
    assert.deepEqual([outcome, error.kind], ['timeout', 'timeout']);
  });

  test("the caller's signal aborts the GET, before it starts or while it waits", async () => {
    const gone = new AbortController();
    gone.abort(new Error('caller went'));
    const early = await failure(get('/stall', 5000, gone.signal));
    assert.equal(early.aborted, 'caller');
    const later = new AbortController();
    const pending = get('/stall', 5000, later.signal);
    setImmediate(() => later.abort(new Error('caller went')));
    const waited = await failure(pending);
    assert.equal(waited.aborted, 'caller');
    assert.deepEqual(
      [failureOf(waited, later.signal).outcome, failureOf(waited, later.signal).error.kind],
      ['aborted', 'cancelled'],
    );
  });

  test('a body cut short is truncated, with the status that came; bad_body for the metrics', async () => {
    const cut = await failure(get('/cut'));
    assert.deepEqual([cut.kind, cut.upstreamStatus, cut.aborted], ['truncated', 200, undefined]);
    const { outcome, error } = failureOf(cut, undefined);
    assert.deepEqual([outcome, error.kind, error.upstreamStatus], ['bad_body', 'bad_body', 200]);
  });

  test('a settled GET keeps nothing of its call: no chunk, no signal, no resolve of its promise', async () => {
    // undici may hold a finished request's handler a while; what the handler holds then stays alive.
    const handlers: object[] = [];
    const spy = {
      dispatch: (options: Parameters<Pool['dispatch']>[0], handler: Parameters<Pool['dispatch']>[1]) => {
        handlers.push(handler);
        return pool.dispatch(options, handler);
      },
    } as unknown as Pool;
    const signal = new AbortController().signal;
    const headers = { accept: 'application/json' };
    assert.equal((await dispatchGet(spy, '/chunks', headers, 5000, signal)).text, '{"lines":["x"]}');
    await failure(dispatchGet(spy, '/cut', headers, 5000, signal));
    assert.equal(handlers.length, 2);
    const functions = new Set<unknown>();
    for (const handler of handlers) {
      for (const [field, value] of Object.entries(handler)) {
        assert.ok(!Buffer.isBuffer(value) && value !== signal, field);
        if (Array.isArray(value)) assert.equal(value.length, 0, field);
        if (typeof value === 'function') functions.add(value);
      }
    }
    // One function shared by every settled GET, in place of each promise's resolve and reject.
    assert.equal(functions.size, 1);
  });
});

test('nothing listening: no answer, a network error, Dagu unreachable', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const nowhere = new Pool(`http://127.0.0.1:${port}`);
  try {
    const refused = await failure(dispatchGet(nowhere, '/ok', {}, 5000, undefined));
    assert.deepEqual([refused.kind, refused.aborted], ['no_answer', undefined]);
    const { outcome, error } = failureOf(refused, undefined);
    assert.deepEqual([outcome, error.kind], ['network_error', 'unreachable']);
  } finally {
    await nowhere.close();
  }
});

test('a too-large answer is bad_body with its status', () => {
  const { outcome, error } = failureOf(
    new TransportFailure('too_large', 200, undefined, undefined),
    undefined,
  );
  assert.deepEqual([outcome, error.kind, error.upstreamStatus], ['bad_body', 'bad_body', 200]);
});
