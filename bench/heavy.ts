// `npm run bench:heavy`: wide and long reads through the gateway against the same reads made directly on
// Dagu's REST API and through the bare proxy (bench/floor-proxy.mjs, making the same REST calls), on one
// real Dagu 2.x seeded by bench/heavy-seed.ts (seeding time printed). Reads:
//   run of 2, 50 and 150 steps (HEAVY_STEP_COUNTS)   GET /dag-runs/{name}/{id}
//   dags perPage=200                                  GET /dags?perPage=200&sort=…&order=…
//   runs limit=500                                    GET /dag-runs?limit=500&fromDate=…
//   step_log of 10,000 lines (0.9 MB), tail=10000     GET …/log?stream=stdout and stream=stderr
// Every cell cycles over distinct targets (HEAVY_DISTINCT runs per step count and of the big log; four
// sort orders of the DAG list; four `fromDate` values of the run list), as many as the highest
// concurrency, so no two calls in flight are the same read (coalescing cannot help) and at concurrency 1
// the targets take turns. The step log is read from two gateways: as shipped (its cache of finished logs
// on: after the warm-up every window is in the cache, a read costs one run-details request) and with
// CACHE_MAX_BYTES=0 (two log requests, like REST and the floor). Both gateways are started with
// `npm start`, an API-key caller (key file), rate limits, audit to a file and metrics on.
// Plain HTTP JSON-RPC client (undici), every answer parsed as JSON on every path (REST too); concurrency 1 and 4,
// BENCH_HEAVY_CALLS calls per cell (default 150), BENCH_ROUNDS rounds (default 3) with the cell order
// rotating; figures are medians over the rounds. The gateway's added time per step of a run is the
// least-squares slope of (gateway − REST) p50 time per call over the step counts, at concurrency 1.
// BENCH_NODE: a Node binary for the gateways and the floor (e.g. the image's LTS).
import { startDagu } from '../test/support/dagu.ts';
import { BIG_LOG_STEP, type HeavySeed, heavySeedOptions, type RunRef, seedHeavy } from './heavy-seed.ts';
import {
  type CellResult,
  fixed,
  gatewayCall,
  grouped,
  type HttpPath,
  type MeasuredProcess,
  measureHttp,
  recordResults,
  runThenStop,
  startFloor,
  succeededRead,
  toolCallJson,
  writeApiKeyFile,
} from './load.ts';
import { type GatewayProcess, loadAverage, servedNodeVersion, startGatewayProcess } from './peer-support.ts';
import { median, slope } from './stats.ts';

const CALLS = Number(process.env.BENCH_HEAVY_CALLS ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_HEAVY_WARMUP ?? 100);
const CONCURRENCIES = [1, 4] as const;
const PATHS = ['rest', 'floor', 'gateway', 'gateway-uncached'] as const;
type PathName = (typeof PATHS)[number];

interface HeavyRead {
  label: string;
  /** Steps of the run, for the per-step slope. */
  steps?: number;
  args(slot: number): Record<string, unknown>;
  /** The REST paths (below the API base) the gateway asks for this read. */
  rest(slot: number): string[];
  paths: readonly PathName[];
}

const esc = encodeURIComponent;
const pick = <T>(list: readonly T[], slot: number): T => list[slot % list.length]!;

function readsOf(seed: HeavySeed): HeavyRead[] {
  const reads: HeavyRead[] = [];
  for (const [steps, runs] of seed.stepRuns) {
    reads.push({
      label: `run, ${steps} steps`,
      steps,
      args: (slot) => ({ target: 'run', ...pick<RunRef>(runs, slot) }),
      rest: (slot) => {
        const run = pick(runs, slot);
        return [`/dag-runs/${esc(run.name)}/${esc(run.dagRunId)}`];
      },
      paths: ['rest', 'floor', 'gateway'],
    });
  }
  const dagQueries = ['name&order=asc', 'name&order=desc', 'nextRun&order=asc', 'nextRun&order=desc'].map(
    (sort) => `perPage=200&sort=${sort}`,
  );
  reads.push({
    label: 'dags perPage=200',
    args: (slot) => ({ target: 'dags', query: pick(dagQueries, slot) }),
    rest: (slot) => [`/dags?${pick(dagQueries, slot)}`],
    paths: ['rest', 'floor', 'gateway'],
  });
  // The same 500 runs under four different queries (every seeded run is newer than these dates).
  const runQueries = [0, 1, 2, 3].map((k) => `limit=500&fromDate=${946_684_800 + k}`);
  reads.push({
    label: 'runs limit=500',
    args: (slot) => ({ target: 'runs', query: pick(runQueries, slot) }),
    rest: (slot) => [`/dag-runs?${pick(runQueries, slot)}`],
    paths: ['rest', 'floor', 'gateway'],
  });
  reads.push({
    label: 'step_log 10,000 lines tail=10000',
    args: (slot) => ({
      target: 'step_log',
      ...pick(seed.bigLogRuns, slot),
      stepName: BIG_LOG_STEP,
      query: 'tail=10000',
    }),
    rest: (slot) => {
      const run = pick(seed.bigLogRuns, slot);
      const log = `/dag-runs/${esc(run.name)}/${esc(run.dagRunId)}/steps/${BIG_LOG_STEP}/log`;
      return [`${log}?stream=stdout&tail=10000`, `${log}?stream=stderr&tail=10000`];
    },
    paths: PATHS,
  });
  return reads;
}

interface Servers {
  daguUrl: string;
  apiBase: string;
  floorUrl: string;
  gateway: GatewayProcess;
  uncached: GatewayProcess;
  apiKey: string;
}

function pathOf(read: HeavyRead, name: PathName, servers: Servers): HttpPath {
  if (name === 'rest') {
    return {
      origin: servers.daguUrl,
      requests: (slot) =>
        read.rest(slot).map((path) => ({
          path: `${servers.apiBase}${path}`,
          method: 'GET' as const,
          headers: { accept: 'application/json' },
        })),
      ok: (status, text) => {
        const body: unknown = JSON.parse(text);
        return status === 200 && body !== null && typeof body === 'object';
      },
    };
  }
  if (name === 'floor') {
    return {
      origin: servers.floorUrl,
      requests: (slot, id) => [
        {
          path: '/mcp',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: toolCallJson(id, read.args(slot)),
        },
      ],
      ok: succeededRead,
    };
  }
  const gateway = name === 'gateway' ? servers.gateway : servers.uncached;
  const call = gatewayCall(servers.apiKey);
  return {
    origin: gateway.url,
    requests: (slot, id) => [
      {
        path: '/mcp',
        method: 'POST',
        headers: call.headers,
        body: toolCallJson(id, read.args(slot), call.meta),
      },
    ],
    ok: succeededRead,
  };
}

interface Cell {
  read: HeavyRead;
  path: PathName;
  concurrency: number;
}

async function measureCell(cell: Cell, servers: Servers, server: MeasuredProcess | undefined) {
  const before = server?.cpuSeconds();
  const result: CellResult = await measureHttp(
    pathOf(cell.read, cell.path, servers),
    CALLS,
    cell.concurrency,
  );
  if (server !== undefined && before !== undefined) {
    result.serverCpuMs = ((server.cpuSeconds() - before) * 1000) / result.calls;
  }
  return result;
}

/** Bytes of one answer of each path for a read (what is moved per call), from a single call. */
async function answerSizes(read: HeavyRead, servers: Servers): Promise<string> {
  const sizes: string[] = [];
  for (const name of read.paths.filter((path) => path !== 'gateway-uncached')) {
    const path = pathOf(read, name, servers);
    let bytes = 0;
    for (const request of path.requests(0, 'size')) {
      const response = await fetch(`${path.origin}${request.path}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      bytes += (await response.arrayBuffer()).byteLength;
    }
    sizes.push(`${name} ${grouped(bytes / 1024)} KiB`);
  }
  return sizes.join(', ');
}

async function main() {
  const started = performance.now();
  const loadBefore = loadAverage();
  const dagu = await startDagu({ generation: 2 });
  const keys = writeApiKeyFile();
  const stops: Array<() => unknown> = [() => dagu.stop(), () => keys.remove()];
  await runThenStop(stops, async () => {
    const seed = await seedHeavy(dagu, heavySeedOptions());
    console.log(
      `seeded ${seed.dagCount} DAGs and ${seed.runCount} runs (Dagu lists at most 500) in ${seed.seedSeconds.toFixed(0)} s`,
    );
    const env = {
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: keys.file,
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
    };
    const gateway = await startGatewayProcess(env);
    stops.unshift(() => gateway.stop());
    const uncached = await startGatewayProcess({ ...env, CACHE_MAX_BYTES: '0' });
    stops.unshift(() => uncached.stop());
    const floor = await startFloor(dagu.url, dagu.apiBase);
    stops.unshift(() => floor.stop());
    const servers: Servers = {
      daguUrl: dagu.url,
      apiBase: dagu.apiBase,
      floorUrl: floor.url,
      gateway,
      uncached,
      apiKey: keys.key,
    };
    const processes: Partial<Record<PathName, MeasuredProcess>> = {
      floor,
      gateway,
      'gateway-uncached': uncached,
    };
    const reads = readsOf(seed);
    const sizes = new Map<HeavyRead, string>();
    for (const read of reads) {
      for (const name of read.paths) {
        const path = pathOf(read, name, servers);
        const probe = await measureHttp(path, 4, 1);
        if (probe.failures > 0) throw new Error(`${name} does not answer the read ${read.label}`);
        await measureHttp(path, WARMUP, 2);
      }
      sizes.set(read, await answerSizes(read, servers));
    }
    const cells: Cell[] = reads.flatMap((read) =>
      CONCURRENCIES.flatMap((concurrency) => read.paths.map((path) => ({ read, path, concurrency }))),
    );
    const results = new Map<Cell, CellResult[]>();
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order so that no cell always runs first (or right after another).
      const offset = Math.floor((round * cells.length) / ROUNDS);
      for (const cell of [...cells.slice(offset), ...cells.slice(0, offset)]) {
        const result = await measureCell(cell, servers, processes[cell.path]);
        results.set(cell, [...(results.get(cell) ?? []), result]);
      }
      console.log(`round ${round + 1} of ${ROUNDS} done`);
    }
    const peakRss = Math.max(gateway.peakRssMiB(), uncached.peakRssMiB());
    const version =
      ((await (await fetch(`${dagu.url}${dagu.apiBase}/health`)).json()) as { version?: string }).version ??
      '?';
    const text = report({ reads, cells, results, sizes, seed, peakRss, version, loadBefore, started });
    console.log(`\n${text}\n`);
    recordResults('heavy-bench', 'Wide and long reads (`npm run bench:heavy`)', text);
  });
}

interface ReportInput {
  reads: HeavyRead[];
  cells: Cell[];
  results: Map<Cell, CellResult[]>;
  sizes: Map<HeavyRead, string>;
  seed: HeavySeed;
  peakRss: number;
  version: string;
  loadBefore: string;
  started: number;
}

function report(input: ReportInput): string {
  const { reads, cells, results } = input;
  const summary = (read: HeavyRead, path: PathName, concurrency: number) => {
    const cell = cells.find((c) => c.read === read && c.path === path && c.concurrency === concurrency);
    const rounds = (cell === undefined ? undefined : results.get(cell)) ?? [];
    const cpu = rounds.flatMap((round) => (round.serverCpuMs === undefined ? [] : [round.serverCpuMs]));
    return {
      callsPerSecond: median(rounds.map((round) => round.callsPerSecond)),
      p50Ms: median(rounds.map((round) => round.p50Ms)),
      serverCpuMs: cpu.length > 0 ? median(cpu) : undefined,
      failures: rounds.reduce((sum, round) => sum + round.failures, 0),
    };
  };
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const lines = [
    `Run ${date} UTC, Node ${servedNodeVersion()} (gateway and floor; load generators on ${process.version}), Dagu ${input.version}, ${CALLS} calls per cell, median of ${ROUNDS} rounds, ` +
      `load average ${input.loadBefore} before and ${loadAverage()} after; ${input.seed.dagCount} DAGs and ` +
      `${input.seed.runCount} runs listed, seeded in ${input.seed.seedSeconds.toFixed(0)} s; whole run ` +
      `${((performance.now() - input.started) / 60_000).toFixed(1)} min. Gateway peak RSS (VmHWM) ${input.peakRss.toFixed(0)} MiB.`,
    '',
    '| read | path | c=1 calls/s | c=1 p50 ms | c=4 calls/s | c=4 p50 ms | CPU ms/call of the serving process (c=1 / c=4) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const read of reads) {
    for (const path of read.paths) {
      const one = summary(read, path, 1);
      const four = summary(read, path, 4);
      const cpu =
        one.serverCpuMs === undefined
          ? ''
          : `${fixed(one.serverCpuMs, 3)} / ${fixed(four.serverCpuMs ?? Number.NaN, 3)}`;
      const failed = one.failures + four.failures > 0 ? ` (${one.failures + four.failures} failed)` : '';
      const label =
        path === 'gateway' && read.paths.includes('gateway-uncached')
          ? 'gateway (cache on, as shipped)'
          : path;
      lines.push(
        `| ${read.label} | ${label}${failed} | ${grouped(one.callsPerSecond)} | ${fixed(one.p50Ms, 2)} | ${grouped(four.callsPerSecond)} | ${fixed(four.p50Ms, 2)} | ${cpu} |`,
      );
    }
  }
  lines.push('', 'Answer sizes (one call): ');
  for (const read of reads) lines.push(`- ${read.label}: ${input.sizes.get(read)}`);
  lines.push('', 'Ratios (same run; goal: gateway ≥ 0.9× REST at c=1 and c=4):', '');
  const ratio = (read: HeavyRead, path: PathName, base: PathName, concurrency: number) =>
    summary(read, path, concurrency).callsPerSecond / summary(read, base, concurrency).callsPerSecond;
  for (const read of reads) {
    for (const path of read.paths.filter((name) => name.startsWith('gateway'))) {
      const parts = CONCURRENCIES.map((c) => {
        const rest = ratio(read, path, 'rest', c);
        return `c=${c}: ${fixed(rest, 2)}× REST${rest >= 0.9 ? '' : ' (not met)'}, ${fixed(ratio(read, path, 'floor', c), 2)}× floor`;
      });
      const cpuRatio = CONCURRENCIES.map((c) =>
        fixed(
          (summary(read, path, c).serverCpuMs ?? Number.NaN) /
            (summary(read, 'floor', c).serverCpuMs ?? Number.NaN),
          2,
        ),
      );
      lines.push(
        `- ${read.label}, ${path}: ${parts.join('; ')}; CPU per call ${cpuRatio.join(' / ')}× the floor's`,
      );
    }
  }
  lines.push('', ...perStep(reads, summary));
  return lines.join('\n');
}

/**
 * The per-step figures: least-squares slopes over the run reads at concurrency 1, of the median
 * latency (p50, steadier than the mean on a shared machine) and of the serving process's CPU per call.
 */
function perStep(
  reads: HeavyRead[],
  summary: (read: HeavyRead, path: PathName, c: number) => { p50Ms: number; serverCpuMs?: number },
): string[] {
  const runs = reads.filter((read) => read.steps !== undefined);
  const added = (read: HeavyRead, path: PathName) =>
    summary(read, path, 1).p50Ms - summary(read, 'rest', 1).p50Ms;
  const slopeOf = (y: (read: HeavyRead) => number) =>
    slope(runs.map((read) => [read.steps!, y(read)] as const)) * 1000;
  const gateway = slopeOf((read) => added(read, 'gateway'));
  const floor = slopeOf((read) => added(read, 'floor'));
  const cpu = slopeOf((read) => summary(read, 'gateway', 1).serverCpuMs ?? Number.NaN);
  const floorCpu = slopeOf((read) => summary(read, 'floor', 1).serverCpuMs ?? Number.NaN);
  const points = runs
    .map((read) => `${read.steps} steps ${fixed(added(read, 'gateway') * 1000, 0)} µs`)
    .join(', ');
  return [
    `Per step of a run (least-squares slope over ${runs.map((read) => read.steps).join(', ')} steps, c=1, p50): ` +
      `the gateway adds ${fixed(gateway, 2)} µs per step over REST (goal ≤ 5 µs: ${gateway <= 5 ? 'met' : 'not met'}); ` +
      `the floor adds ${fixed(floor, 2)} µs. Gateway p50 minus REST p50 per call: ${points}. ` +
      `CPU per step in the serving process: gateway ${fixed(cpu, 2)} µs, floor ${fixed(floorCpu, 2)} µs.`,
  ];
}

await main();
