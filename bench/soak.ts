// `npm run soak`: a bounded soak of the gateway as users start it (`npm start`, its own process) on a
// seeded real Dagu: SOAK_SECONDS (default 600) at SOAK_RATE calls per second (default 100) of mixed
// reads (tools/call of several targets in both protocol eras, resources/read, bad input), with the
// gateway's resident memory (VmRSS, /proc) sampled every SOAK_SAMPLE_SECONDS (default 10). Prints the
// samples, start / end / max, and the slope of a least-squares line over the samples after the first
// minute (warm-up), in MiB per minute. Shared by the performance and the hardening work.
// SOAK_HEAVY_SHARE (default 0.1) of the calls are the wide and long reads of bench:heavy, on the same
// Dagu seeded by bench/heavy-seed.ts as well (HEAVY_* scale it; seeding time printed): a 150-step `run`
// (its distinct runs in turn), `dags perPage=200`, `runs limit=500` and a 10,000-line `step_log`
// (tail=10000), in turn; 0 leaves them out and skips that seed. The soak is the default:
// 600 s at 100 calls/s, 10 % heavy.
// Each sample also breaks the RSS down, from the gateway's own /metrics (V8 heap used and committed,
// its large-object space, external memory, the shared cache's counted bytes) and /proc smaps_rollup
// (anonymous memory: heap, malloc arenas, buffers; file-backed: the node binary and libraries).
// MALLOC_* variables reach the gateway (MALLOC_ARENA_MAX=2, as the container image sets it).
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { BIG_LOG_STEP, heavySeedOptions, seedHeavy } from './heavy-seed.ts';
import { loadAverage, servedNodeVersion, startGatewayProcess, startPeerDagu } from './peer-support.ts';
import { slope } from './stats.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 100);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 10);
const WARMUP_SECONDS = Math.min(60, SECONDS / 4);
const HEAVY_SHARE = Number(process.env.SOAK_HEAVY_SHARE ?? 0.1);
// Extra node flags for the gateway (words split on spaces), to compare V8 or allocator settings with
// `npm start`'s own; unset: `npm start` as users run it.
const NODE_ARGS = process.env.SOAK_NODE_ARGS?.split(' ').filter((word) => word !== '');

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'soak', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Call {
  headers: Record<string, string>;
  body: string;
}

function toolCall(era: 'modern' | 'legacy', args: unknown, id: number): Call {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (era === 'legacy') {
    return {
      headers: { ...base, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'dagu_read', arguments: args },
      }),
    };
  }
  return {
    headers: {
      ...base,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'dagu_read',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'dagu_read', arguments: args, _meta: ENVELOPE },
    }),
  };
}

function resourceRead(uri: string, id: number): Call {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/read',
      'mcp-name': uri,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri, _meta: ENVELOPE } }),
  };
}

/** The gauges of a Prometheus text exposition that `breakdown` reads, by name (label text included). */
const GAUGES = {
  heapUsed: 'nodejs_heap_size_used_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  largeObjects: 'nodejs_heap_space_size_total_bytes{space="large_object"}',
  external: 'nodejs_external_memory_bytes',
  cache: 'mcp_gateway_cache_bytes',
} as const;

type Breakdown = Record<keyof typeof GAUGES | 'anonymous' | 'fileBacked', number>;

const MiB = 1024 * 1024;

async function breakdown(url: string, pid: number): Promise<Breakdown | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const gauge = (name: string) => {
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
      return line === undefined ? Number.NaN : Number(line.slice(name.length + 1).split(' ')[0]) / MiB;
    };
    const smaps = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(smaps)?.[1] ?? Number.NaN) / 1024;
    const entries = Object.entries(GAUGES).map(([key, name]) => [key, gauge(name)]);
    return {
      ...(Object.fromEntries(entries) as Record<keyof typeof GAUGES, number>),
      anonymous: kib('Anonymous'),
      fileBacked: kib('Rss') - kib('Anonymous'),
    };
  } catch {
    return undefined;
  }
}

async function main() {
  const { instance: dagu, seed } = await startPeerDagu();
  const heavySeed = HEAVY_SHARE > 0 ? await seedHeavy(dagu, heavySeedOptions()) : undefined;
  if (heavySeed !== undefined) {
    console.log(
      `heavy seed: ${heavySeed.dagCount} DAGs, ${heavySeed.runCount} runs listed, in ${heavySeed.seedSeconds.toFixed(0)} s`,
    );
  }
  const gateway = await startGatewayProcess(
    {
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '256',
    },
    NODE_ARGS === undefined ? {} : { nodeArgs: NODE_ARGS },
  );
  const name = seed.dags.twoSteps;
  const run = seed.runs.twoStepsFirst;
  const [step] = seed.facts.twoStepsStepNames;
  const mix: Array<(id: number) => Call> = [
    (id) => toolCall('modern', { target: 'run', name, dagRunId: run }, id),
    (id) => toolCall('legacy', { target: 'run', name, dagRunId: 'latest' }, id),
    (id) => toolCall('modern', { target: 'run_logs', name, dagRunId: run, query: 'tail=50' }, id),
    (id) => toolCall('modern', { target: 'step_log', name, dagRunId: run, stepName: step }, id),
    (id) => toolCall('legacy', { target: 'dags' }, id),
    (id) => toolCall('modern', { target: 'dag_spec', name }, id),
    (id) => toolCall('modern', { target: 'runs', query: `name=${name}` }, id),
    (id) => toolCall('modern', { target: 'reference', name: 'read-tool' }, id),
    (id) => toolCall('legacy', { target: 'dag', name: 'no-such-dag' }, id),
    (id) => toolCall('modern', { target: 'run', name }, id),
    (id) => resourceRead(`dagu://runs/${name}/${run}`, id),
    (id) => resourceRead('dagu://dags', id),
  ];

  const longRuns =
    heavySeed === undefined ? [] : (heavySeed.stepRuns.get(Math.max(...heavySeed.stepRuns.keys())) ?? []);
  const bigLogs = heavySeed?.bigLogRuns ?? [];
  const heavyMix: Array<(id: number, turn: number) => Call> = [
    (id, turn) => toolCall('modern', { target: 'run', ...longRuns[turn % longRuns.length] }, id),
    (id) => toolCall('modern', { target: 'dags', query: 'perPage=200' }, id),
    (id) => toolCall('modern', { target: 'runs', query: 'limit=500' }, id),
    (id, turn) =>
      toolCall(
        'modern',
        {
          target: 'step_log',
          ...bigLogs[turn % bigLogs.length],
          stepName: BIG_LOG_STEP,
          query: 'tail=10000',
        },
        id,
      ),
  ];
  /** Call `n` is heavy when it carries the running share of heavy calls past a whole number. */
  const heavyTurn = (n: number) =>
    heavySeed !== undefined && Math.floor((n + 1) * HEAVY_SHARE) > Math.floor(n * HEAVY_SHARE)
      ? Math.floor(n * HEAVY_SHARE)
      : undefined;
  let heavyCalls = 0;
  let heavyFailed = 0;

  const pool = new Pool(gateway.url, { connections: 32 });
  const samples: Array<{ second: number; rssMiB: number; calls: number; parts?: Breakdown }> = [];
  let sent = 0;
  let answered = 0;
  let failed = 0;
  let cpuSeconds = Number.NaN;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const sample = () => {
    const point = { second: Math.round(elapsed()), rssMiB: gateway.rssMiB(), calls: answered };
    samples.push(point);
    return breakdown(gateway.url, gateway.pid).then((parts) => Object.assign(point, { parts }));
  };
  const loadBefore = loadAverage();
  const cpuBefore = gateway.cpuSeconds();
  await sample();
  const sampler = setInterval(sample, SAMPLE_SECONDS * 1000);
  const inflight = new Set<Promise<void>>();
  try {
    // Open loop: calls leave on a fixed schedule whatever the answers take.
    while (elapsed() < SECONDS) {
      const due = Math.floor(elapsed() * RATE);
      while (sent < due) {
        const turn = heavyTurn(sent);
        if (turn !== undefined) heavyCalls += 1;
        const call =
          turn === undefined
            ? mix[sent % mix.length]!(sent)
            : heavyMix[turn % heavyMix.length]!(sent, Math.floor(turn / heavyMix.length));
        sent += 1;
        const done: Promise<void> = pool
          .request({ path: '/mcp', method: 'POST', headers: call.headers, body: call.body })
          .then(async (response) => {
            const text = await response.body.text();
            if (response.statusCode !== 200) failed += 1;
            // The heavy reads must succeed: a tool error would make them light.
            else if (
              turn !== undefined &&
              (!text.includes('"structuredContent"') || text.includes('"isError":true'))
            ) {
              heavyFailed += 1;
            }
            answered += 1;
          })
          .catch(() => {
            failed += 1;
          })
          .finally(() => inflight.delete(done));
        inflight.add(done);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inflight);
    clearInterval(sampler);
    await sample();
    cpuSeconds = gateway.cpuSeconds() - cpuBefore;
  } finally {
    clearInterval(sampler);
    await pool.close();
    await gateway.stop();
    await dagu.stop();
  }

  const rss = samples.map((point) => point.rssMiB);
  const trend = slope(
    samples
      .filter((point) => point.second >= WARMUP_SECONDS)
      .map((point) => [point.second / 60, point.rssMiB]),
  );
  console.log(
    `\nsoak: ${SECONDS} s at ${RATE} calls/s of ${mix.length} mixed reads and ${heavyCalls} heavy ones ` +
      `(share ${HEAVY_SHARE}), gateway on Node ${servedNodeVersion()}`,
  );
  console.log(
    `load average ${loadBefore} before, ${loadAverage()} after; ${answered} answered, ${failed} failed, ${heavyFailed} heavy reads without a result\n`,
  );
  console.log(
    'second  RSS MiB  calls answered | MiB: heap used  heap committed  (large objects)  external  cache counted  anonymous  file-backed',
  );
  const cell = (value: number | undefined, width: number) => (value ?? Number.NaN).toFixed(1).padStart(width);
  for (const point of samples) {
    const parts = point.parts;
    console.log(
      `${String(point.second).padStart(6)}  ${point.rssMiB.toFixed(1).padStart(7)}  ${String(point.calls).padEnd(14)} | ` +
        `${cell(parts?.heapUsed, 14)}  ${cell(parts?.heapTotal, 14)}  ${cell(parts?.largeObjects, 15)}  ` +
        `${cell(parts?.external, 8)}  ${cell(parts?.cache, 13)}  ${cell(parts?.anonymous, 9)}  ${cell(parts?.fileBacked, 11)}`,
    );
  }
  console.log(
    `\nRSS start ${rss[0]!.toFixed(1)} MiB, end ${rss.at(-1)!.toFixed(1)} MiB, max ${Math.max(...rss).toFixed(1)} MiB; ` +
      `slope after the first ${WARMUP_SECONDS} s: ${trend.toFixed(2)} MiB/min`,
  );
  console.log(
    `gateway CPU ${cpuSeconds.toFixed(1)} s (user + system), ${((cpuSeconds / answered) * 1000).toFixed(3)} ms per call` +
      (NODE_ARGS === undefined ? '' : `; node flags added: ${NODE_ARGS.join(' ')}`),
  );
  if (failed + heavyFailed > 0) process.exitCode = 1;
}

await main();
