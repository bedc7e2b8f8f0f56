// Time bounds on raw sockets against the real gateway (src/http/time-bounds.ts): a client that sends
// nothing, trickles its headers, announces a body and never sends it, or trickles a body, with and
// without a valid API key, sees its socket closed within its bound (measured, with a margin for a
// loaded machine), answered in the gateway's `{code, message}` shape where an answer is possible,
// audited and counted. Oversized headers get the gateway's 431, audited and counted too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bearer, newApiKey, postMcp, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { getTestDagu } from '../../support/dagu.ts';
import { FAULTS, type FaultServer, startFaultServer } from '../../support/fake-dagu-faults.ts';
import { type RunningGateway, startGateway } from '../../support/gateway.ts';

const HEADERS_MS = 600;
const BODY_MS = 600;
/** A loaded CI machine: Node checks the bounds every 150 ms; the rest is scheduling. */
const MARGIN_MS = 1000;

interface Closed {
  ms: number;
  answer: string;
}

/** Opens a socket, runs `drive` on it, and resolves when the server closes it: after how long, with what. */
function measure(port: number, drive: (socket: Socket) => void): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const started = performance.now();
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ ms: performance.now() - started, answer }));
    socket.on('connect', () => drive(socket));
    setTimeout(() => reject(new Error('the socket stayed open for 20 s')), 20_000).unref();
  });
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(socket: Socket, text: string, everyMs = 100): void {
  let index = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable || index >= text.length) return clearInterval(timer);
    socket.write(text[index++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown;
const statusOf = (answer: string) => Number(answer.split(' ', 2)[1]);

describe('time bounds on every request (raw sockets, real gateway)', () => {
  let gateway: RunningGateway;
  let port: number;
  let key: string;
  const figures: string[] = [];
  before(async () => {
    const dagu = await getTestDagu();
    key = newApiKey('bounds');
    gateway = await startGateway({
      DAGU_URL: dagu.url,
      DAGU_PROBE_INTERVAL_MS: '0',
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'bounds', key }]),
      HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      BODY_TIMEOUT_MS: String(BODY_MS),
    });
    port = Number(new URL(gateway.baseUrl).port);
  });
  after(async () => {
    await gateway?.close();
    process.stdout.write(`# socket close times: ${figures.join('; ')}\n`);
  });

  const post = (auth: boolean, length: number) =>
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${auth ? `Authorization: Bearer ${key}\r\n` : ''}Content-Length: ${length}\r\n\r\n`;

  test('a socket that sends nothing is closed no sooner than the headers bound and within 1 s more', async () => {
    const closed = await measure(port, () => {});
    figures.push(`nothing ${closed.ms.toFixed(0)} ms`);
    assert.ok(closed.ms >= HEADERS_MS && closed.ms < HEADERS_MS + MARGIN_MS, `${closed.ms} ms`);
  });

  test('trickled headers get 408 request_incomplete no sooner than the headers bound and within 1 s more', async () => {
    const closed = await measure(port, (socket) => trickle(socket, post(true, 2)));
    figures.push(`headers trickled ${closed.ms.toFixed(0)} ms`);
    assert.ok(closed.ms >= HEADERS_MS && closed.ms < HEADERS_MS + MARGIN_MS, `${closed.ms} ms`);
    assert.equal(statusOf(closed.answer), 408);
    assert.deepEqual(bodyOf(closed.answer), {
      code: 'request_incomplete',
      message: 'The request did not arrive in time.',
    });
  });

  for (const auth of [true, false]) {
    const who = auth ? 'authenticated' : 'unauthenticated';
    const expected = auth
      ? '408 no sooner than the headers + body bound and within 1 s more'
      : '401 at once, closed before any bound';
    test(`${who}: Content-Length 100 and no body: ${expected}`, async () => {
      const closed = await measure(port, (socket) => socket.write(post(auth, 100)));
      figures.push(`${who} no body ${closed.ms.toFixed(0)} ms`);
      if (auth) {
        assert.ok(
          closed.ms >= HEADERS_MS + BODY_MS && closed.ms < HEADERS_MS + BODY_MS + MARGIN_MS,
          `${closed.ms} ms`,
        );
        assert.equal(statusOf(closed.answer), 408);
      } else {
        // The 401 is sent at once, and the connection closes with it (the body is never read).
        assert.ok(closed.ms < HEADERS_MS, `${closed.ms} ms`);
        assert.equal(statusOf(closed.answer), 401);
      }
    });

    test(`${who}: a body trickled one byte at a time: ${expected}`, async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} }).padEnd(60);
      const closed = await measure(port, (socket) => {
        socket.write(post(auth, body.length));
        trickle(socket, body, 50);
      });
      figures.push(`${who} body trickled ${closed.ms.toFixed(0)} ms`);
      if (auth) {
        assert.ok(
          closed.ms >= HEADERS_MS + BODY_MS && closed.ms < HEADERS_MS + BODY_MS + MARGIN_MS,
          `${closed.ms} ms`,
        );
        assert.equal(statusOf(closed.answer), 408);
        assert.deepEqual(bodyOf(closed.answer), {
          code: 'request_incomplete',
          message: 'The request did not arrive in time.',
        });
      } else {
        assert.ok(closed.ms < HEADERS_MS, `${closed.ms} ms`);
        assert.equal(statusOf(closed.answer), 401);
      }
    });
  }

  test('oversized headers get 431 headers_too_large in the gateway shape', async () => {
    const closed = await measure(port, (socket) =>
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(statusOf(closed.answer), 431);
    assert.deepEqual(bodyOf(closed.answer), {
      code: 'headers_too_large',
      message: 'The request headers are too large.',
    });
  });

  test('each refusal is audited and counted by reason, once: a client that hangs up after its 408 adds no bad_http', async () => {
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    const count = (reason: string) =>
      Number(
        new RegExp(`mcp_gateway_refused_requests_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1],
      );
    assert.ok(count('headers_timeout') >= 2, metrics);
    assert.equal(count('body_timeout'), 2);
    assert.equal(count('headers_too_large'), 1);
    assert.equal(count('bad_http'), 0, metrics);
    const audit = readFileSync(gateway.auditPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const reasons = audit
      .filter((entry) => entry.event === 'mcp.request_denied')
      .map((entry) => entry.reason);
    for (const reason of ['headers_timeout', 'body_timeout', 'headers_too_large'])
      assert.ok(reasons.includes(reason), `${reason} in ${reasons.join(', ')}`);
    assert.equal(reasons.filter((reason) => reason === 'body_timeout').length, 2, reasons.join(', '));
    assert.ok(!reasons.includes('bad_http'), reasons.join(', '));
  });
});

describe('the whole-request bound (REQUEST_TIMEOUT_MS) against a Dagu that never answers (fake upstream)', () => {
  const REQUEST_MS = 800;
  let faults: FaultServer;
  let gateway: RunningGateway;
  const key = newApiKey('serving');
  before(async () => {
    faults = await startFaultServer();
    gateway = await startGateway({
      // Every path under this base hangs.
      DAGU_URL: `${faults.url}/${FAULTS.hang}`,
      DAGU_API_BASE: '/api/v1',
      DAGU_PROBE_INTERVAL_MS: '0',
      DAGU_TIMEOUT_MS: '30000',
      CALL_DEADLINE_MS: '30000',
      REQUEST_TIMEOUT_MS: String(REQUEST_MS),
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'serving', key }]),
    });
  });
  after(async () => {
    await gateway?.close();
    await faults?.close();
  });

  test('a call served too long gets 503 request_timeout within its bound, audited and counted', async () => {
    const started = performance.now();
    const response = await postMcp(gateway.mcpUrl, bearer(key), toolCallBody({ target: 'dags' }));
    const ms = performance.now() - started;
    process.stdout.write(`# request timeout: 503 after ${ms.toFixed(0)} ms (bound ${REQUEST_MS} ms)\n`);
    assert.equal(response.status, 503, response.text);
    assert.deepEqual(response.json(), {
      code: 'request_timeout',
      message: 'The request took too long to serve.',
    });
    assert.equal(response.headers.get('connection'), 'close');
    assert.ok(ms >= REQUEST_MS && ms < REQUEST_MS + MARGIN_MS, `${ms} ms`);
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    assert.match(metrics, /mcp_gateway_refused_requests_total\{reason="request_timeout"\} 1/);
    const audit = readFileSync(gateway.auditPath, 'utf8');
    assert.match(audit, /"reason":"request_timeout"/);
  });
});
