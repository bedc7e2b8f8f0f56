// A flood of HTTP/2 streams that never send their body, against the gateway with native TLS started as
// users start it (`npm start`, its own process): `npm run bench:h2-flood`.
//
// Issue 28's item 4 as a measurement. Each flood stream announces a body and never sends it; the
// gateway should answer 408 after HEADERS_TIMEOUT_MS + BODY_TIMEOUT_MS and reset the stream, while a
// well-behaved reader on its own session keeps reading `dags` (p50 and max printed). Beside the flood,
// TCP connections that never begin the TLS handshake (closed after HEADERS_TIMEOUT_MS). When every
// flood stream is answered, or after the flood deadline, the client ends whatever is left open; the
// gateway's resident memory is read before, at the peak, then, and BENCH_SETTLE_MS later, and its log
// is searched for late-reply warnings and stack traces. The test suite checks the same behaviour on
// events (test/integration/http/h2-bounds.e2e.test.ts); the memory figures need the wait, so they are
// here.
//
//   BENCH_STREAMS            flood streams (default 8000)
//   BENCH_PER_SESSION        streams per session (default 100, the gateway's SETTINGS_MAX_CONCURRENT_STREAMS)
//   BENCH_SILENT             TCP connections that never begin the TLS handshake (default 150)
//   BENCH_HEADERS_MS, BENCH_BODY_MS   the gateway's HEADERS_TIMEOUT_MS and BODY_TIMEOUT_MS (default 10000 each)
//   BENCH_FLOOD_DEADLINE_MS  longest wait for the flood's answers (default 60000)
//   BENCH_SETTLE_MS          wait after the flood before the last memory reading (default 30000)
//   BENCH_ROUNDS             floods one after the other, RSS read after each (default 1)
import type { ClientHttp2Session } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { bearer, newApiKey, toolCallBody, writeKeysFile } from '../test/support/auth-fixtures.ts';
import { http2Get, http2Post, MCP_HEADERS, openSession } from '../test/support/h2.ts';
import { createTestCa } from '../test/support/tls.ts';
import { loadAverage, percentile, startGatewayProcess, startPeerDagu } from './peer-support.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 8000);
const PER_SESSION = Number(process.env.BENCH_PER_SESSION ?? 100);
const SILENT = Number(process.env.BENCH_SILENT ?? 150);
const HEADERS_MS = Number(process.env.BENCH_HEADERS_MS ?? 10_000);
const BODY_MS = Number(process.env.BENCH_BODY_MS ?? 10_000);
const FLOOD_DEADLINE_MS = Number(process.env.BENCH_FLOOD_DEADLINE_MS ?? 60_000);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 30_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Where the gateway's memory is, from its /metrics (prom-client's process and heap gauges), in MiB. */
async function heapOf(session: ClientHttp2Session): Promise<string> {
  const { text } = await http2Get(session, '/metrics');
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]) / 2 ** 20;
  return `heap ${gauge('nodejs_heap_size_used_bytes').toFixed(0)}/${gauge('nodejs_heap_size_total_bytes').toFixed(0)} MiB, external ${gauge('nodejs_external_memory_bytes').toFixed(0)} MiB`;
}
const mib = (value: number) => `${value.toFixed(0)} MiB`;

const { instance: dagu } = await startPeerDagu();
const ca = createTestCa();
const pair = ca.issue('flood');
const key = newApiKey('flood');
const headers = { ...MCP_HEADERS, ...bearer(key) };
const gateway = await startGatewayProcess(
  {
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    TLS_CERT_FILE: pair.certFile,
    TLS_KEY_FILE: pair.keyFile,
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'flood', key }]),
    RATE_LIMIT_PER_MINUTE: '1000000',
    HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    BODY_TIMEOUT_MS: String(BODY_MS),
  },
  { tls: { ca: ca.caPem } },
);

/** One flood stream: resolves with its status (0: none) when answered, or when the flood is ended. */
interface FloodStream {
  answered: Promise<number>;
  end(): void;
}

function floodStream(session: ClientHttp2Session): FloodStream {
  const stream = session.request({ ':method': 'POST', ':path': '/mcp', ...headers, 'content-length': '100' });
  stream.on('error', () => {});
  const answered = new Promise<number>((resolve) => {
    stream.once('response', (answer) => resolve(Number(answer[':status'])));
    stream.once('close', () => resolve(0));
  });
  stream.resume();
  return { answered, end: () => stream.close() };
}

/**
 * Opens the flood's sessions and streams and waits for their answers (statuses undefined if not all
 * came within the deadline); `end()` lets go of every stream and session still open.
 */
async function flood(): Promise<{ sessions: number; statuses: number[] | undefined; end(): void }> {
  const sessions: ClientHttp2Session[] = [];
  const streams: FloodStream[] = [];
  for (let opened = 0; opened < STREAMS; opened += PER_SESSION) {
    const session = await openSession(gateway.url, ca.caPem);
    session.on('error', () => {});
    sessions.push(session);
    for (let i = 0; i < Math.min(PER_SESSION, STREAMS - opened); i++) streams.push(floodStream(session));
  }
  const statuses = await Promise.race([
    Promise.all(streams.map((stream) => stream.answered)),
    sleep(FLOOD_DEADLINE_MS).then(() => undefined),
  ]);
  return {
    sessions: sessions.length,
    statuses,
    end() {
      for (const stream of streams) stream.end();
      for (const session of sessions) session.close();
    },
  };
}

try {
  const reader = await openSession(gateway.url, ca.caPem);
  for (let i = 0; i < 20; i++) await http2Post(reader, '/mcp', headers, toolCallBody({ target: 'dags' }));
  const rssStart = gateway.rssMiB();
  const heapStart = await heapOf(reader);

  const silent: Socket[] = Array.from({ length: SILENT }, () =>
    netConnect(Number(new URL(gateway.url).port), '127.0.0.1').on('error', () => {}),
  );
  let silentOpen = SILENT;
  for (const socket of silent) socket.once('close', () => silentOpen--);

  let flooding = true;
  const readMs: number[] = [];
  const readStatuses = new Map<number, number>();
  const reading = (async () => {
    while (flooding) {
      const started = performance.now();
      let status = 0;
      try {
        status = (await http2Post(reader, '/mcp', headers, toolCallBody({ target: 'dags' }))).status;
      } catch {}
      readMs.push(performance.now() - started);
      readStatuses.set(status, (readStatuses.get(status) ?? 0) + 1);
    }
  })();

  const floodStarted = performance.now();
  const { sessions, statuses, end } = await flood();
  const floodMs = performance.now() - floodStarted;
  const rssAtEnd = gateway.rssMiB();
  const heapAtEnd = await heapOf(reader);
  const silentAtEnd = silentOpen;
  end();
  flooding = false;
  await reading;

  await sleep(SETTLE_MS);
  const rssSettled = gateway.rssMiB();
  const heapSettled = await heapOf(reader);
  const metrics = (await http2Get(reader, '/metrics')).text;
  const lateReplies = /^mcp_gateway_late_replies_total (\d+)$/m.exec(metrics)?.[1] ?? 'no metric';
  const log = gateway.logText().split('\n');
  const warnLines = log.filter((line) => /"level":(40|50|60)/.test(line));
  const alreadySent = log.filter((line) => line.includes('Reply was already sent')).length;
  const withStack = log.filter((line) => line.includes('"stack"')).length;

  const answers = new Map<number, number>();
  for (const status of statuses ?? []) answers.set(status, (answers.get(status) ?? 0) + 1);
  readMs.sort((a, b) => a - b);
  const count = (map: Map<number, number>) =>
    [...map].map(([status, n]) => `${status === 0 ? 'none' : status}×${n}`).join(', ');
  console.log(
    [
      `h2 flood: ${STREAMS} streams on ${sessions} sessions, bounds ${HEADERS_MS} + ${BODY_MS} ms, load ${loadAverage()}`,
      statuses === undefined
        ? `  flood answers: not all within ${FLOOD_DEADLINE_MS} ms`
        : `  flood answers: ${count(answers)}, all within ${(floodMs / 1000).toFixed(1)} s`,
      `  reader: ${readMs.length} reads (${count(readStatuses)}), p50 ${percentile(readMs, 0.5).toFixed(0)} ms, max ${(readMs.at(-1) ?? Number.NaN).toFixed(0)} ms`,
      `  connections without a TLS handshake: ${silentAtEnd} of ${SILENT} open at the flood's end, ${silentOpen} ${(SETTLE_MS / 1000).toFixed(0)} s later`,
      `  RSS: ${mib(rssStart)} before, ${mib(gateway.peakRssMiB())} peak, ${mib(rssAtEnd)} at the flood's end, ${mib(rssSettled)} ${(SETTLE_MS / 1000).toFixed(0)} s after it (${rssSettled - rssStart >= 0 ? '+' : ''}${(rssSettled - rssStart).toFixed(0)} MiB)`,
      `  memory: ${heapStart} before; ${heapAtEnd} at the flood's end; ${heapSettled} after`,
      `  log: ${log.length - 1} lines, ${warnLines.length} at warn or above, ${alreadySent} "Reply was already sent", ${withStack} with a stack; late replies counted: ${lateReplies}`,
    ].join('\n'),
  );
  // Further floods without the reader: memory that a flood leaves behind would add up.
  for (let round = 2; round <= ROUNDS; round++) {
    (await flood()).end();
    await sleep(SETTLE_MS);
    const rss = gateway.rssMiB();
    console.log(
      `  flood ${round}: RSS ${mib(rss)} ${(SETTLE_MS / 1000).toFixed(0)} s after it (${rss - rssStart >= 0 ? '+' : ''}${(rss - rssStart).toFixed(0)} MiB from the first start)`,
    );
  }
  reader.close();
  for (const socket of silent) socket.destroy();
} finally {
  await gateway.stop();
  await dagu.stop();
  ca.remove();
}
