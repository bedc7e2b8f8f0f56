// `npm run bench:peer`: the gateway against Dagu's own `/mcp` and Dagu's REST API, on one real, seeded
// Dagu 2.x, measured interleaved in one run. For each read (BENCH_READS, default `run,step_log`: a
// finished run, and the 3,000-line stdout of a finished step, last 1,000 lines) three paths read the
// same thing:
//   rest      the Dagu REST GET behind it, directly (for step_log: stdout only)
//   dagu-mcp  Dagu's own /mcp, tools/call dagu_read (initialize-era sessions, as Dagu serves them)
//   gateway   this gateway, started with `npm start` in its own process
//   floor     bench/floor-proxy.mjs: node:http + one undici GET + JSON, nothing else (what any Node
//             gateway that asks Dagu on every call costs at least); plain HTTP generator only
// The goals are judged on `run`; `step_log` shows what the cache of finished logs does.
// Each path is driven by three load generators in this process: the v1 MCP SDK client (REST: undici,
// it is no MCP server), undici with microsecond timing, and autocannon; at concurrency 1 and 16,
// BENCH_CALLS calls per cell (default 600; autocannon runs BENCH_AUTOCANNON_SECONDS instead), BENCH_ROUNDS rounds (default 3, the cell order rotating each
// round); each figure is the median over the rounds. The gateway's CPU per call is read from its own
// process (/proc/<pid>/stat) while the load runs here. `bench/RESULTS.md` keeps the last run.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { freePort } from '../test/support/dagu.ts';
import {
  cpuSecondsOf,
  type GatewayProcess,
  loadAverage,
  median,
  percentile,
  ROOT,
  startGatewayProcess,
  startPeerDagu,
} from './peer-support.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Enough calls for the JIT to settle before anything is measured.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1500);
const CONCURRENCIES = [1, 16] as const;
const TARGETS = ['rest', 'dagu-mcp', 'gateway', 'floor'] as const;
/** The floor (bench/floor-proxy.mjs) is measured with the plain HTTP generator only. */
const measured = (generator: Generator, target: Target) => target !== 'floor' || generator === 'http';
const GENERATORS = ['mcp-client', 'http', 'autocannon'] as const;
const READS = (process.env.BENCH_READS ?? 'run,step_log').split(',') as Array<'run' | 'step_log'>;
type Target = (typeof TARGETS)[number];
type Generator = (typeof GENERATORS)[number];

/** A prepared way to make one call of one path: a raw HTTP request and an MCP-client call. */
interface PathSpec {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The request body for a JSON-RPC id: Dagu's sessions answer concurrent calls by id, so ids differ. */
  body?: (id: string) => string;
  /** One call through an MCP SDK client (v1), or undefined for REST. */
  connectClient?: () => Promise<{ call(): Promise<void>; close(): Promise<void> }>;
  /** Whether a raw answer is a successful read. */
  ok(status: number, text: string): boolean;
}

interface CellResult {
  /** Calls made (autocannon runs for a duration, so its count varies). */
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU milliseconds per call of the serving process, for gateway and floor cells. */
  serverCpuMs?: number;
  failures: number;
}

const toolCallJson = (id: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'dagu_read', arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

const succeeded = (status: number, text: string) =>
  status === 200 && text.includes('"structuredContent"') && !text.includes('"isError":true');

async function v1Client(url: string, args: Record<string, unknown>) {
  const client = new LegacyClient({ name: 'bench-peer', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    async call() {
      const result = (await client.callTool({ name: 'dagu_read', arguments: args })) as { isError?: boolean };
      if (result.isError === true) throw new Error('the read failed');
    },
    close: () => client.close(),
  };
}

/** Dagu's /mcp has sessions: initialize once, then every call names the session. */
async function daguSession(mcpUrl: string): Promise<Record<string, string>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(mcpUrl, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  if (session === null) throw new Error("Dagu's /mcp gave no session id");
  const sessionHeaders = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const ready = await fetch(mcpUrl, {
    method: 'POST',
    headers: sessionHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await ready.text();
  return sessionHeaders;
}

/** `calls` calls made by `concurrency` workers one after another (closed loop): rate, latencies, failures. */
async function closedLoop(
  calls: number,
  concurrency: number,
  call: (id: string) => Promise<boolean>,
): Promise<CellResult> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next += 1;
        const t0 = performance.now();
        const ok = await call(`call-${next}`);
        latencies.push(performance.now() - t0);
        if (!ok) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    calls,
    callsPerSecond: calls / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    failures,
  };
}

async function measureHttp(spec: PathSpec, calls: number, concurrency: number): Promise<CellResult> {
  const pool = new Pool(spec.origin, { connections: concurrency, pipelining: 1 });
  try {
    return await closedLoop(calls, concurrency, async (id) => {
      const response = await pool.request({
        path: spec.path,
        method: spec.method,
        headers: spec.headers,
        ...(spec.body === undefined ? {} : { body: spec.body(id) }),
      });
      return spec.ok(response.statusCode, await response.body.text());
    });
  } finally {
    await pool.close();
  }
}

async function measureClient(spec: PathSpec, calls: number, concurrency: number): Promise<CellResult> {
  if (spec.connectClient === undefined) return measureHttp(spec, calls, concurrency);
  const client = await spec.connectClient();
  try {
    return await closedLoop(calls, concurrency, () =>
      client.call().then(
        () => true,
        () => false,
      ),
    );
  } finally {
    await client.close();
  }
}

/**
 * autocannon runs for a fixed time (BENCH_AUTOCANNON_SECONDS, default 2): it ends a run on its one-second
 * sampling tick, so a fixed count of calls would cap the rate at that count per second.
 */
const AUTOCANNON_SECONDS = Number(process.env.BENCH_AUTOCANNON_SECONDS ?? 2);

async function measureAutocannon(spec: PathSpec, _calls: number, concurrency: number): Promise<CellResult> {
  const result = await autocannon({
    url: `${spec.origin}${spec.path}`,
    method: spec.method,
    headers: spec.headers,
    // autocannon writes a fresh id in place of [<id>] for every request.
    ...(spec.body === undefined ? {} : { body: spec.body('[<id>]'), idReplacement: true }),
    connections: concurrency,
    pipelining: 1,
    duration: AUTOCANNON_SECONDS,
  });
  return {
    calls: result.requests.total,
    callsPerSecond: result.requests.total / result.duration,
    // autocannon records latency in whole milliseconds.
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

const MEASURE: Record<
  Generator,
  (spec: PathSpec, calls: number, concurrency: number) => Promise<CellResult>
> = {
  'mcp-client': measureClient,
  http: measureHttp,
  autocannon: measureAutocannon,
};

async function measureCell(
  spec: PathSpec,
  generator: Generator,
  concurrency: number,
  server: MeasuredProcess | undefined,
): Promise<CellResult> {
  const cpuBefore = server?.cpuSeconds();
  const result = await MEASURE[generator](spec, CALLS, concurrency);
  if (server !== undefined && cpuBefore !== undefined) {
    result.serverCpuMs = ((server.cpuSeconds() - cpuBefore) * 1000) / result.calls;
  }
  return result;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const grouped = (value: number) => Math.round(value).toLocaleString('en-US');

/** A process whose CPU time the bench reads while it measures. */
interface MeasuredProcess {
  cpuSeconds(): number;
}

/** Starts bench/floor-proxy.mjs for one REST path (plain node, its own process). */
async function startFloor(daguUrl: string, restPath: string) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'floor-proxy.mjs')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, FLOOR_PORT: String(port), FLOOR_DAGU: daguUrl, FLOOR_PATH: restPath },
  });
  await new Promise<void>((ready, failed) => {
    child.once('message', () => ready());
    child.once('exit', (code) => failed(new Error(`the floor proxy exited (${code})`)));
  });
  const pid = child.pid!;
  return {
    url: `http://127.0.0.1:${port}`,
    cpuSeconds: () => cpuSecondsOf(pid),
    stop: () => child.kill(),
  };
}

/** One read measured on the paths: its arguments and the REST GET behind it. */
interface PeerRead {
  name: 'run' | 'step_log';
  args: Record<string, unknown>;
  restPath: string;
  restOk(text: string): boolean;
}

async function main() {
  const { instance: dagu, seed } = await startPeerDagu();
  const esc = encodeURIComponent;
  const reads: Record<PeerRead['name'], PeerRead> = {
    run: {
      name: 'run',
      args: { target: 'run', name: seed.dags.twoSteps, dagRunId: seed.runs.twoStepsFirst },
      restPath: `${dagu.apiBase}/dag-runs/${esc(seed.dags.twoSteps)}/${esc(seed.runs.twoStepsFirst)}`,
      restOk: (text) => text.includes(seed.runs.twoStepsFirst),
    },
    step_log: {
      name: 'step_log',
      args: {
        target: 'step_log',
        name: seed.dags.manyLines,
        dagRunId: seed.runs.manyLines,
        stepName: 'count',
      },
      restPath: `${dagu.apiBase}/dag-runs/${esc(seed.dags.manyLines)}/${esc(seed.runs.manyLines)}/steps/count/log?stream=stdout&tail=1000`,
      restOk: (text) => text.includes('"content"'),
    },
  };
  const gateway = await startGatewayProcess({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    RATE_LIMIT_PER_MINUTE: '1000000',
    MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
  });
  const loadBefore = loadAverage();
  try {
    const daguMcp = `${dagu.url}/mcp`;
    const sessionHeaders = await daguSession(daguMcp);
    const specsOf = (read: PeerRead, floorUrl: string): Record<Target, PathSpec> => ({
      rest: {
        origin: dagu.url,
        path: read.restPath,
        method: 'GET',
        headers: { accept: 'application/json' },
        ok: (status, text) => status === 200 && read.restOk(text),
      },
      'dagu-mcp': {
        origin: dagu.url,
        path: '/mcp',
        method: 'POST',
        headers: sessionHeaders,
        body: (id) => toolCallJson(id, read.args),
        connectClient: () => v1Client(daguMcp, read.args),
        ok: succeeded,
      },
      gateway: {
        origin: gateway.url,
        path: '/mcp',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'dagu_read',
        },
        body: (id) =>
          toolCallJson(id, read.args, {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'bench-peer', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          }),
        connectClient: () => v1Client(gateway.mcpUrl, read.args),
        ok: succeeded,
      },
      floor: {
        origin: floorUrl,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: (id) => toolCallJson(id, read.args),
        ok: (status, text) => status === 200 && text.includes('"structuredContent"'),
      },
    });

    const sections: string[] = [];
    for (const readName of READS) {
      const read = reads[readName];
      if (read === undefined) throw new Error(`BENCH_READS: unknown read ${readName} (run, step_log)`);
      const floor = await startFloor(dagu.url, read.restPath);
      try {
        sections.push(await benchRead(read, specsOf(read, floor.url), { gateway, floor }));
      } finally {
        floor.stop();
      }
    }
    const loadAfter = loadAverage();
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const version =
      ((await (await fetch(`${dagu.url}${dagu.apiBase}/health`)).json()) as { version?: string }).version ??
      '?';
    const text = [
      `Run ${date} UTC, Node ${process.version}, Dagu ${version}, ${CALLS} calls per cell, median of ${ROUNDS} rounds, ` +
        `load average ${loadBefore} before and ${loadAfter} after.`,
      ...sections,
    ].join('\n');
    console.log(`\n${text}\n`);
    recordResults(text);
  } finally {
    await gateway.stop();
    await dagu.stop();
  }
}

/** Measures one read on every path, generator and concurrency, interleaved; returns its table and ratios. */
async function benchRead(
  read: PeerRead,
  specs: Record<Target, PathSpec>,
  processes: { gateway: GatewayProcess; floor: MeasuredProcess },
): Promise<string> {
  // Every path answers a real read before anything is measured; then each is warmed up.
  for (const target of TARGETS) {
    const spec = specs[target];
    const probe = await measureHttp(spec, 1, 1);
    if (probe.failures > 0) throw new Error(`${target} does not answer the ${read.name} read`);
    await measureHttp(spec, WARMUP, 4);
    if (spec.connectClient) await measureClient(spec, WARMUP / 5, 4);
  }

  const cells = GENERATORS.flatMap((generator) =>
    CONCURRENCIES.flatMap((concurrency) =>
      TARGETS.filter((target) => measured(generator, target)).map((target) => ({
        generator,
        concurrency,
        target,
      })),
    ),
  );
  const results = new Map<string, CellResult[]>();
  const key = (cell: { generator: string; concurrency: number; target: string }) =>
    `${cell.generator}|${cell.concurrency}|${cell.target}`;
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so that no path always runs first (or right after another).
    const offset = Math.floor((round * cells.length) / ROUNDS);
    for (const cell of [...cells.slice(offset), ...cells.slice(0, offset)]) {
      const result = await measureCell(
        specs[cell.target],
        cell.generator,
        cell.concurrency,
        cell.target === 'gateway' ? processes.gateway : cell.target === 'floor' ? processes.floor : undefined,
      );
      results.set(key(cell), [...(results.get(key(cell)) ?? []), result]);
    }
  }
  const summary = (cell: { generator: string; concurrency: number; target: string }) => {
    const rounds = results.get(key(cell)) ?? [];
    const cpu = rounds.flatMap((round) => (round.serverCpuMs === undefined ? [] : [round.serverCpuMs]));
    return {
      callsPerSecond: median(rounds.map((round) => round.callsPerSecond)),
      p50Ms: median(rounds.map((round) => round.p50Ms)),
      p99Ms: median(rounds.map((round) => round.p99Ms)),
      serverCpuMs: cpu.length > 0 ? median(cpu) : undefined,
      failures: rounds.reduce((sum, round) => sum + round.failures, 0),
    };
  };

  const lines: string[] = [];
  lines.push(
    '',
    `### \`${read.name}\`${read.name === 'run' ? ' (the goals)' : ''}: \`${JSON.stringify(read.args)}\``,
    '',
    '| generator | path | c=1 calls/s | c=1 p50 ms | c=16 calls/s | c=16 p50 ms | CPU ms/call of the gateway or floor process (c=1 / c=16) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const generator of GENERATORS) {
    for (const target of TARGETS.filter((candidate) => measured(generator, candidate))) {
      const one = summary({ generator, concurrency: 1, target });
      const many = summary({ generator, concurrency: 16, target });
      const cpu =
        one.serverCpuMs === undefined
          ? ''
          : `${fixed(one.serverCpuMs, 3)} / ${fixed(many.serverCpuMs ?? Number.NaN, 3)}`;
      const failed = one.failures + many.failures > 0 ? ` (${one.failures + many.failures} failed)` : '';
      const label =
        generator === 'mcp-client' && target === 'rest'
          ? 'rest (undici)'
          : target === 'floor'
            ? 'floor (minimal proxy)'
            : target;
      lines.push(
        `| ${generator} | ${label}${failed} | ${grouped(one.callsPerSecond)} | ${fixed(one.p50Ms, 2)} | ${grouped(many.callsPerSecond)} | ${fixed(many.p50Ms, 2)} | ${cpu} |`,
      );
    }
  }
  lines.push('', 'Ratios (same run):', '');
  const goals: string[] = [];
  // The goals are set on `run`; other reads report the same ratios without a verdict.
  const verdict = (met: boolean, goal: string) =>
    read.name === 'run' ? ` (goal ${goal}: ${met ? 'met' : 'not met'})` : '';
  for (const generator of GENERATORS) {
    for (const concurrency of CONCURRENCIES) {
      const ratio =
        summary({ generator, concurrency, target: 'gateway' }).callsPerSecond /
        summary({ generator, concurrency, target: 'dagu-mcp' }).callsPerSecond;
      goals.push(
        `- ${generator}, c=${concurrency}: gateway / Dagu /mcp throughput ${fixed(ratio, 2)}×${verdict(ratio >= 1.2, '≥ 1.2×')}`,
      );
    }
    const added =
      summary({ generator, concurrency: 1, target: 'gateway' }).p50Ms -
      summary({ generator, concurrency: 1, target: 'rest' }).p50Ms;
    const daguAdded =
      summary({ generator, concurrency: 1, target: 'dagu-mcp' }).p50Ms -
      summary({ generator, concurrency: 1, target: 'rest' }).p50Ms;
    goals.push(
      `- ${generator}, c=1: p50 added over REST: gateway ${fixed(added, 2)} ms, Dagu /mcp ${fixed(daguAdded, 2)} ms${verdict(added <= 1, '≤ 1 ms')}`,
    );
  }
  const floorRatio = (concurrency: number) =>
    summary({ generator: 'http', concurrency, target: 'floor' }).callsPerSecond /
    summary({ generator: 'http', concurrency, target: 'dagu-mcp' }).callsPerSecond;
  goals.push(
    `- http: floor (minimal proxy) / Dagu /mcp throughput ${fixed(floorRatio(1), 2)}× (c=1), ${fixed(floorRatio(16), 2)}× (c=16): what a Node proxy that asks Dagu on every call reaches at most here`,
  );
  const cpuAll = GENERATORS.flatMap((generator) =>
    CONCURRENCIES.flatMap((concurrency) => {
      const cpu = summary({ generator, concurrency, target: 'gateway' }).serverCpuMs;
      return cpu === undefined ? [] : [cpu];
    }),
  );
  const worstCpu = Math.max(...cpuAll);
  goals.push(
    `- gateway CPU per tools/call, in its own process: ${fixed(Math.min(...cpuAll), 3)}–${fixed(worstCpu, 3)} ms over the cells${verdict(worstCpu <= 0.3, '≤ 0.3 ms')}`,
  );
  lines.push(...goals);
  return lines.join('\n');
}

/** Keeps the last run in bench/RESULTS.md between its markers. */
function recordResults(text: string) {
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const start = '<!-- peer-bench:start -->';
  const end = '<!-- peer-bench:end -->';
  const current = readFileSync(file, 'utf8');
  const block = `${start}\n${text}\n${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  writeFileSync(
    file,
    from >= 0 && to > from
      ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n## Against Dagu's own /mcp (\`npm run bench:peer\`)\n\n${block}\n`,
  );
}

await main();
