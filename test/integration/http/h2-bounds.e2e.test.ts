// HTTP/2 held to HTTP/1.1's time bounds, against the real gateway with native TLS and a real Dagu
// (src/http/time-bounds.ts, src/http/tls.ts): a stream that never sends its body, or trickles it,
// gets 408 `request_incomplete` no sooner than HEADERS_TIMEOUT_MS + BODY_TIMEOUT_MS and is closed;
// a connection that never finishes its TLS handshake, and an h2 session that never asks anything,
// are closed after HEADERS_TIMEOUT_MS; each refusal is audited once and never as `bad_http`; the
// late reply that follows a refusal is counted and logged once at debug, never at warn with a
// stack; and a flood of such streams leaves a reader answered and no stream open in the gateway.
// Upper bounds leave 1.5 s for a loaded machine; lower bounds are the bounds themselves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ClientHttp2Session, ServerHttp2Stream } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { bearer, newApiKey, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { getTestDagu } from '../../support/dagu.ts';
import { clientHello, http2Get, http2Post, MCP_HEADERS, openSession, stalledPost } from '../../support/h2.ts';
import { createTestCa, type RunningTlsGateway, startTlsGateway, type TestCa } from '../../support/tls.ts';

const HEADERS_MS = 300;
const BODY_MS = 300;
const WHOLE_MS = HEADERS_MS + BODY_MS;
/** A loaded machine with 2 shared cores: scheduling, TLS and the client's own work. */
const SLACK_MS = 1500;
/** Past this a test fails instead of waiting for a bound the gateway does not keep. */
const DEADLINE_MS = WHOLE_MS + SLACK_MS + 3000;
const INCOMPLETE = { code: 'request_incomplete', message: 'The request did not arrive in time.' };

let ca: TestCa;
let gateway: RunningTlsGateway;
const key = newApiKey('h2');
const headers = { ...MCP_HEADERS, ...bearer(key) };

/** The real gateway with native TLS and an API key, on the test Dagu, with these settings. */
async function startH2Gateway(name: string, env: Record<string, string>): Promise<RunningTlsGateway> {
  const dagu = await getTestDagu();
  const pair = ca.issue(name);
  return startTlsGateway(
    {
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      DAGU_PROBE_INTERVAL_MS: '0',
      TLS_CERT_FILE: pair.certFile,
      TLS_KEY_FILE: pair.keyFile,
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'h2', key }]),
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
      ...env,
    },
    { logLevel: 'debug' },
  );
}

before(async () => {
  ca = createTestCa();
  gateway = await startH2Gateway('h2', {
    HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    BODY_TIMEOUT_MS: String(BODY_MS),
  });
});
after(async () => {
  await gateway?.close();
  ca?.remove();
});

/** Resolves with `promise`, or rejects after `ms` naming what did not happen. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const auditLines = () =>
  readFileSync(gateway.auditPath, 'utf8')
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const readDags = (session: ClientHttp2Session) =>
  http2Post(session, '/mcp', headers, toolCallBody({ target: 'dags' }));

describe('HTTP/2 streams keep the whole-request bound', () => {
  test('a stream that never sends its announced body gets 408 request_incomplete no sooner than HEADERS_TIMEOUT_MS + BODY_TIMEOUT_MS and within 1.5 s more, then is reset with NO_ERROR; the session still serves', async () => {
    const session = await openSession(gateway.baseUrl, ca.caPem);
    try {
      const stalled = await stalledPost(session, '/mcp', headers, { deadlineMs: DEADLINE_MS });
      process.stdout.write(
        `# h2 stream without body: ${stalled.status} after ${stalled.answeredMs.toFixed(0)} ms (bound ${WHOLE_MS} ms), closed after ${stalled.closedMs.toFixed(0)} ms\n`,
      );
      assert.equal(stalled.status, 408);
      assert.deepEqual(JSON.parse(stalled.body), INCOMPLETE);
      assert.ok(stalled.answeredMs >= WHOLE_MS, `answered after ${stalled.answeredMs} ms`);
      assert.ok(stalled.answeredMs < WHOLE_MS + SLACK_MS, `answered after ${stalled.answeredMs} ms`);
      assert.ok(stalled.closedMs < WHOLE_MS + SLACK_MS, `closed after ${stalled.closedMs} ms`);
      assert.equal(stalled.rstCode, 0, 'RST_STREAM NO_ERROR: the answer stands');
      const read = await readDags(session);
      assert.equal(read.status, 200);
    } finally {
      session.close();
    }
  });

  test('a body trickled one byte every 100 ms gets 408 request_incomplete at the same bound', async () => {
    const session = await openSession(gateway.baseUrl, ca.caPem);
    try {
      const stalled = await stalledPost(session, '/mcp', headers, {
        deadlineMs: DEADLINE_MS,
        trickle: { everyMs: 100 },
      });
      assert.equal(stalled.status, 408);
      assert.deepEqual(JSON.parse(stalled.body), INCOMPLETE);
      assert.ok(stalled.answeredMs >= WHOLE_MS, `answered after ${stalled.answeredMs} ms`);
      assert.ok(stalled.answeredMs < WHOLE_MS + SLACK_MS, `answered after ${stalled.answeredMs} ms`);
    } finally {
      session.close();
    }
  });
});

describe('connections and sessions that never ask are closed after HEADERS_TIMEOUT_MS', () => {
  /** Opens a TCP connection, runs `drive`, resolves with the time until the gateway closes it. */
  const closedAfter = (drive: (socket: ReturnType<typeof netConnect>) => void) =>
    within(
      new Promise<number>((resolve) => {
        const started = performance.now();
        const socket = netConnect(gateway.port, '127.0.0.1', () => drive(socket));
        socket.on('error', () => {});
        socket.on('close', () => resolve(performance.now() - started));
      }),
      DEADLINE_MS,
      'the close of a connection without a TLS handshake',
    );

  test('a TCP connection that never begins the TLS handshake is closed no sooner than HEADERS_TIMEOUT_MS and within 1.5 s more, unanswered and unaudited', async () => {
    const seen = auditLines().length;
    let received = 0;
    const ms = await closedAfter((socket) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
      }),
    );
    process.stdout.write(`# no TLS handshake: closed after ${ms.toFixed(0)} ms (bound ${HEADERS_MS} ms)\n`);
    assert.ok(ms >= HEADERS_MS && ms < HEADERS_MS + SLACK_MS, `${ms} ms`);
    assert.equal(received, 0, 'no byte sent before a handshake');
    assert.deepEqual(auditLines().slice(seen), [], 'a handshake is not an HTTP request');
  });

  test('a ClientHello sent one byte every 50 ms is cut at the same bound', async () => {
    const hello = await clientHello();
    let sent = 0;
    const ms = await closedAfter((socket) => {
      const timer = setInterval(() => {
        if (!socket.writable || sent >= hello.length - 1) return clearInterval(timer);
        socket.write(hello.subarray(sent, ++sent));
      }, 50);
      socket.once('close', () => clearInterval(timer));
    });
    assert.ok(sent < hello.length - 1, 'the handshake was cut before the ClientHello was complete');
    assert.ok(ms >= HEADERS_MS && ms < HEADERS_MS + SLACK_MS, `${ms} ms`);
  });

  test('an h2 session that opens no stream gets GOAWAY (NO_ERROR) and is closed no sooner than HEADERS_TIMEOUT_MS and within 1.5 s more', async () => {
    const started = performance.now();
    const session = await openSession(gateway.baseUrl, ca.caPem);
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
    const closed = new Promise<number>((resolve) =>
      session.once('close', () => resolve(performance.now() - started)),
    );
    session.on('error', () => {});
    assert.equal(await within(goaway, DEADLINE_MS, 'GOAWAY'), 0);
    const ms = await within(closed, DEADLINE_MS, 'the session close');
    assert.ok(ms >= HEADERS_MS && ms < HEADERS_MS + SLACK_MS, `${ms} ms`);
  });
});

describe('refusals are audited once, late replies logged once at debug', () => {
  test('HTTP/1.1 over TLS: a 408 whose client then hangs up is audited once as body_timeout, not also as bad_http', async () => {
    const seen = auditLines().length;
    const answer = await within(
      new Promise<string>((resolve) => {
        let text = '';
        const socket = tlsConnect(
          {
            host: '127.0.0.1',
            port: gateway.port,
            ca: ca.caPem,
            servername: 'localhost',
            ALPNProtocols: ['http/1.1'],
          },
          () =>
            socket.write(
              `POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${key}\r\nContent-Length: 100\r\n\r\n`,
            ),
        );
        socket.setEncoding('utf8');
        socket.on('error', () => {});
        socket.on('data', (chunk: string) => {
          text += chunk;
          // The answer is in: hang up, as a client does, mid-request as far as the parser knows.
          if (text.includes('request_incomplete')) socket.end();
        });
        socket.on('close', () => resolve(text));
      }),
      DEADLINE_MS,
      'the 408 and the close',
    );
    assert.match(answer, /^HTTP\/1\.1 408 /);
    const added = auditLines().slice(seen);
    assert.deepEqual(
      added.map((entry) => [entry.event, entry.reason, entry.http_status]),
      [['mcp.request_denied', 'body_timeout', 408]],
    );
  });

  test('HTTP/2: a stream refused with 408 is audited once as body_timeout; the late reply after it is counted and logged once at debug, without a stack, nothing at warn', async () => {
    const seen = auditLines().length;
    const mark = gateway.log.lines.length;
    const session = await openSession(gateway.baseUrl, ca.caPem);
    try {
      const stalled = await stalledPost(session, '/mcp', headers, { deadlineMs: DEADLINE_MS });
      assert.equal(stalled.status, 408);
      const late = await within(
        gateway.log.next((line) => line.lateReply === true, mark),
        DEADLINE_MS,
        'the late reply line',
      );
      assert.equal(late.level, 20, 'debug');
      assert.doesNotMatch(JSON.stringify(late), /stack|node_modules/);
      const since = gateway.log.lines.slice(mark);
      assert.deepEqual(
        since.filter((line) => Number(line.level) >= 40),
        [],
        'nothing at warn or above',
      );
      assert.equal(since.filter((line) => line.lateReply === true && line.reqId === late.reqId).length, 1);
      const added = auditLines().slice(seen);
      assert.deepEqual(
        added.map((entry) => [entry.event, entry.reason, entry.http_status]),
        [['mcp.request_denied', 'body_timeout', 408]],
      );
      const metrics = (await http2Get(session, '/metrics')).text;
      const count = Number(/^mcp_gateway_late_replies_total (\d+)$/m.exec(metrics)?.[1]);
      const logged = gateway.log.lines.filter((line) => line.lateReply === true).length;
      assert.equal(count, logged, 'every late reply is counted and logged once');
    } finally {
      session.close();
    }
  });
});

describe('a flood of HTTP/2 streams that never send their body', () => {
  const SESSIONS = 20;
  const STREAMS_PER_SESSION = 100;
  // Twenty TLS handshakes and 2,000 streams at once in this one process: a headers bound (which
  // bounds the handshake too) of 300 ms would be missed by the loop, not by the clients.
  const FLOOD_HEADERS_MS = 3000;
  let flooded: RunningTlsGateway;
  before(async () => {
    flooded = await startH2Gateway('flood', {
      HEADERS_TIMEOUT_MS: String(FLOOD_HEADERS_MS),
      BODY_TIMEOUT_MS: String(BODY_MS),
    });
  });
  after(async () => {
    await flooded?.close();
  });

  test(`${SESSIONS * STREAMS_PER_SESSION} such streams: each gets 408, a concurrent reader is answered every time, and the gateway keeps no stream open after them`, async () => {
    // The gateway's own count of open streams, from its server's events.
    let open = 0;
    let drained: (() => void) | undefined;
    const onStream = (stream: ServerHttp2Stream) => {
      open++;
      stream.once('close', () => {
        if (--open === 0) drained?.();
      });
    };
    flooded.app.server.on('stream', onStream);
    // Each session asks at once: one that stays silent past HEADERS_TIMEOUT_MS is closed.
    const reader = await openSession(flooded.baseUrl, ca.caPem);
    const sessions: ClientHttp2Session[] = [];
    try {
      let flooding = true;
      const readMs: number[] = [];
      const readStatuses: number[] = [];
      const reading = (async () => {
        while (flooding) {
          const started = performance.now();
          readStatuses.push((await readDags(reader)).status);
          readMs.push(performance.now() - started);
        }
      })();
      const flood = await Promise.all(
        Array.from({ length: SESSIONS }, async () => {
          const session = await openSession(flooded.baseUrl, ca.caPem);
          sessions.push(session);
          return Array.from({ length: STREAMS_PER_SESSION }, () =>
            stalledPost(session, '/mcp', headers, {
              deadlineMs: FLOOD_HEADERS_MS + BODY_MS + SLACK_MS + 5000,
            }),
          );
        }),
      );
      const outcomes = await Promise.all(flood.flat());
      flooding = false;
      await reading;
      const left = open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (drained = resolve));
      await within(left, 2000, 'every stream closed in the gateway');

      readMs.sort((a, b) => a - b);
      const p50 = readMs[Math.floor(readMs.length / 2)] ?? Number.NaN;
      const slowest = Math.max(...outcomes.map((outcome) => outcome.answeredMs));
      process.stdout.write(
        `# h2 flood: ${outcomes.length} streams, slowest 408 after ${slowest.toFixed(0)} ms; reader ${readMs.length} reads, p50 ${p50.toFixed(0)} ms, max ${readMs.at(-1)?.toFixed(0)} ms\n`,
      );
      assert.deepEqual(
        [...new Set(outcomes.map((outcome) => outcome.status))],
        [408],
        `every flood stream got 408: ${JSON.stringify(outcomes.filter((outcome) => outcome.status !== 408).slice(0, 3))}`,
      );
      assert.ok(readStatuses.length > 0, 'the reader read during the flood');
      assert.deepEqual([...new Set(readStatuses)], [200], 'every read was answered');
    } finally {
      flooded.app.server.off('stream', onStream);
      for (const session of [reader, ...sessions]) session.close();
    }
  });
});

describe('a stream served too long (REQUEST_TIMEOUT_MS) whose client never finishes its body', () => {
  const REQUEST_MS = 400;
  let served: RunningTlsGateway;
  before(async () => {
    served = await startH2Gateway('served', { REQUEST_TIMEOUT_MS: String(REQUEST_MS) });
  });
  after(async () => {
    await served?.close();
  });

  test('gets 503 request_timeout, is reset with NO_ERROR, and the body reader late reply is one debug line, nothing at warn', async () => {
    const session = await openSession(served.baseUrl, ca.caPem);
    try {
      const stalled = await stalledPost(session, '/mcp', headers, {
        deadlineMs: REQUEST_MS + SLACK_MS + 3000,
      });
      assert.equal(stalled.status, 503);
      assert.ok(stalled.answeredMs >= REQUEST_MS && stalled.answeredMs < REQUEST_MS + SLACK_MS);
      assert.equal(stalled.rstCode, 0);
      const late = await within(
        served.log.next((line) => line.lateReply === true, 0),
        SLACK_MS,
        'the late reply line',
      );
      assert.equal(late.level, 20);
      assert.deepEqual(
        served.log.lines.filter((line) => Number(line.level) >= 40),
        [],
        'nothing at warn or above',
      );
    } finally {
      session.close();
    }
  });
});
