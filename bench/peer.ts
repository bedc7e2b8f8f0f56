// `npm run bench:peer`: the gateway against Dagu's own `/mcp`, Dagu's REST API and the bare proxy, on one
// real, seeded Dagu 2.x, measured interleaved in one run. Reads (BENCH_READS, default all three):
//   run           one finished 2-step run, every caller reading the same run
//   run_distinct  16 finished 2-step runs of 16 DAGs (BENCH_DISTINCT), seeded here: each of the 16 callers
//                 reads its own run, at concurrency 1 the runs take turns, so coalescing cannot help (run
//                 details are never cached)
//   step_log      the 3,000-line stdout of a finished step, last 1,000 lines (the gateway's cache of
//                 finished logs on, as shipped; REST reads stdout only)
// Paths:
//   rest            the Dagu REST GET behind it, directly
//   dagu-mcp        Dagu's own /mcp, tools/call dagu_read (initialize-era sessions, as Dagu serves them)
//   gateway         this gateway, `npm start` in its own process, an API-key caller (key file), rate
//                   limits, audit to a file and metrics on; tracing off
//   gateway-traced  a second such gateway with tracing on (sampler always_on) exporting OTLP/JSON to a
//                   sink in this process; plain HTTP generator only (issue 21's cost of tracing)
//   floor           bench/floor-proxy.mjs: node:http + the same REST GET + JSON, nothing else (what any
//                   Node gateway that asks Dagu on every call costs at least)
// Each path is driven by three load generators in this process: the v1 MCP SDK client (REST: undici,
// it is no MCP server), undici with microsecond timing, and autocannon; at concurrency 1 and 16,
// BENCH_CALLS calls per cell (default 600; autocannon runs BENCH_AUTOCANNON_SECONDS instead), BENCH_ROUNDS
// rounds (default 3, the cell order rotating each round); each figure is the median over the rounds. The
// serving processes' CPU per call is read from /proc/<pid>/stat while the load runs here. BENCH_NODE: a
// Node binary for the gateways and the floor (e.g. the image's LTS; the generators stay on this Node).
// `bench/RESULTS.md` keeps the last run.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import autocannon from 'autocannon';
import { runAll, writeDags } from './heavy-seed.ts';
import {
  type CellResult,
  closedLoop,
  fixed,
  gatewayCall,
  grouped,
  type MeasuredProcess,
  measureHttp as measureHttpPath,
  recordResults,
  runThenStop,
  startFloor,
  toolCallJson,
  warmUpInTurns,
  writeApiKeyFile,
} from './load.ts';
import {
  type GatewayProcess,
  loadAverage,
  servedNodeVersion,
  startGatewayProcess,
  startPeerDagu,
} from './peer-support.ts';
import { median } from './stats.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Enough calls for the JIT to settle before anything is measured: after 12,000 the gateway on Node 24
// was still optimizing (bench/RESULTS.md, sixteenth round).
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20000);
const DISTINCT = Number(process.env.BENCH_DISTINCT ?? 16);
const CONCURRENCIES = [1, 16] as const;
const TARGETS = ['rest', 'dagu-mcp', 'gateway', 'gateway-traced', 'floor'] as const;
/** The traced gateway is measured with the plain HTTP generator only. */
const measured = (generator: Generator, target: Target) =>
  target !== 'gateway-traced' || generator === 'http';
const GENERATORS = ['mcp-client', 'http', 'autocannon'] as const;
const READ_NAMES = ['run', 'run_distinct', 'step_log'] as const;
type ReadName = (typeof READ_NAMES)[number];
const READS = (process.env.BENCH_READS ?? READ_NAMES.join(',')).split(',') as ReadName[];
type Target = (typeof TARGETS)[number];
type Generator = (typeof GENERATORS)[number];

/** A prepared way to make one call of one path for a slot (load.ts): a raw HTTP request and an MCP-client call. */
interface PathSpec {
  origin: string;
  path(slot: number): string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The request body for a JSON-RPC id: Dagu's sessions answer concurrent calls by id, so ids differ. */
  body?: (id: string, slot: number) => string;
  /** An MCP SDK client (v1) for calls, or undefined for REST. */
  connectClient?: () => Promise<{ call(slot: number): Promise<void>; close(): Promise<void> }>;
  /** Whether a raw answer is a successful read. */
  ok(status: number, text: string): boolean;
}

const succeeded = (status: number, text: string) =>
  status === 200 && text.includes('"structuredContent"') && !text.includes('"isError":true');

async function v1Client(url: string, args: (slot: number) => Record<string, unknown>, headers = {}) {
  const client = new LegacyClient({ name: 'bench-peer', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return {
    async call(slot: number) {
      const result = (await client.callTool({ name: 'dagu_read', arguments: args(slot) })) as {
        isError?: boolean;
      };
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

function measureHttp(spec: PathSpec, calls: number, concurrency: number): Promise<CellResult> {
  return measureHttpPath(
    {
      origin: spec.origin,
      requests: (slot, id) => [
        {
          path: spec.path(slot),
          method: spec.method,
          headers: spec.headers,
          ...(spec.body === undefined ? {} : { body: spec.body(id, slot) }),
        },
      ],
      ok: spec.ok,
    },
    calls,
    concurrency,
  );
}

async function measureClient(spec: PathSpec, calls: number, concurrency: number): Promise<CellResult> {
  if (spec.connectClient === undefined) return measureHttp(spec, calls, concurrency);
  const client = await spec.connectClient();
  try {
    return await closedLoop(calls, concurrency, (_id, slot) =>
      client.call(slot).then(
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
  let connections = 0;
  let ids = 0;
  const result = await autocannon({
    url: `${spec.origin}${spec.path(0)}`,
    method: spec.method,
    headers: spec.headers,
    connections: concurrency,
    pipelining: 1,
    duration: AUTOCANNON_SECONDS,
    // Each connection is one caller with its own slots (load.ts). autocannon resets a request's context
    // after every request, so the caller's state lives in this closure, set up once per connection.
    setupClient: (client) => {
      const caller = connections++;
      let calls = 0;
      client.setRequests([
        {
          setupRequest: (request) => {
            const slot = caller + calls * concurrency;
            calls += 1;
            ids += 1;
            return {
              ...request,
              path: spec.path(slot),
              ...(spec.body === undefined ? {} : { body: spec.body(`ac-${ids}`, slot) }),
            };
          },
        },
      ]);
    },
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

/** One read measured on the paths: its arguments and the REST GET behind it, per slot. */
interface PeerRead {
  name: ReadName;
  args(slot: number): Record<string, unknown>;
  restPath(slot: number): string;
  restOk(text: string): boolean;
  /** Shown in the heading. */
  described: string;
}

/** A local OTLP/HTTP sink: accepts POST /v1/traces, answers 200, counts what arrived. */
async function startTraceSink() {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        received.exports += 1;
        received.bytes += bytes;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else response.writeHead(404).end();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const TWO_STEPS = `steps:
  - name: step one
    command: sh -c 'echo "hello from step one"; echo "warning from step one" >&2'
  - name: step two
    command: echo "second step"
    depends: [step one]
`;

async function main() {
  const { instance: dagu, seed } = await startPeerDagu();
  const esc = encodeURIComponent;
  const keys = writeApiKeyFile();
  const sink = await startTraceSink();
  const stops: Array<() => unknown> = [() => dagu.stop(), () => keys.remove(), () => sink.stop()];
  await runThenStop(stops, async () => {
    const seedStarted = performance.now();
    const distinctNames = Array.from(
      { length: DISTINCT },
      (_, i) => `distinct-${String(i).padStart(2, '0')}`,
    );
    writeDags(dagu, Object.fromEntries(distinctNames.map((name) => [name, TWO_STEPS])));
    const distinctRuns = await runAll(dagu, distinctNames, 8);
    console.log(
      `seeded ${DISTINCT} distinct 2-step runs in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    const twoSteps = { name: seed.dags.twoSteps, dagRunId: seed.runs.twoStepsFirst };
    const reads: Record<ReadName, PeerRead> = {
      run: {
        name: 'run',
        described: 'every caller reads the same run',
        args: () => ({ target: 'run', ...twoSteps }),
        restPath: () => `${dagu.apiBase}/dag-runs/${esc(twoSteps.name)}/${esc(twoSteps.dagRunId)}`,
        restOk: (text) => text.includes(twoSteps.dagRunId),
      },
      run_distinct: {
        name: 'run_distinct',
        described: `${DISTINCT} runs of ${DISTINCT} 2-step DAGs, each caller its own run`,
        args: (slot) => ({ target: 'run', ...distinctRuns[slot % DISTINCT]! }),
        restPath: (slot) => {
          const run = distinctRuns[slot % DISTINCT]!;
          return `${dagu.apiBase}/dag-runs/${esc(run.name)}/${esc(run.dagRunId)}`;
        },
        restOk: (text) => text.includes('"dagRunDetails"'),
      },
      step_log: {
        name: 'step_log',
        described: 'the cache of finished logs on, as shipped',
        args: () => ({
          target: 'step_log',
          name: seed.dags.manyLines,
          dagRunId: seed.runs.manyLines,
          stepName: 'count',
        }),
        restPath: () =>
          `${dagu.apiBase}/dag-runs/${esc(seed.dags.manyLines)}/${esc(seed.runs.manyLines)}/steps/count/log?stream=stdout&tail=1000`,
        restOk: (text) => text.includes('"content"'),
      },
    };
    const env = {
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: keys.file,
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
    };
    const gateway = await startGatewayProcess({ ...env, OTEL_SDK_DISABLED: 'true' });
    stops.unshift(() => gateway.stop());
    const traced = await startGatewayProcess({
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_TRACES_SAMPLER: 'always_on',
    });
    stops.unshift(() => traced.stop());
    const floor = await startFloor(dagu.url, dagu.apiBase);
    stops.unshift(() => floor.stop());
    const loadBefore = loadAverage();
    const daguMcp = `${dagu.url}/mcp`;
    const sessionHeaders = await daguSession(daguMcp);
    const call = gatewayCall(keys.key);
    const gatewaySpec = (read: PeerRead, server: GatewayProcess): PathSpec => ({
      origin: server.url,
      path: () => '/mcp',
      method: 'POST',
      headers: call.headers,
      body: (id, slot) => toolCallJson(id, read.args(slot), call.meta),
      connectClient: () => v1Client(server.mcpUrl, read.args, { authorization: `Bearer ${keys.key}` }),
      ok: succeeded,
    });
    const specsOf = (read: PeerRead): Record<Target, PathSpec> => ({
      rest: {
        origin: dagu.url,
        path: read.restPath,
        method: 'GET',
        headers: { accept: 'application/json' },
        ok: (status, text) => status === 200 && read.restOk(text),
      },
      'dagu-mcp': {
        origin: dagu.url,
        path: () => '/mcp',
        method: 'POST',
        headers: sessionHeaders,
        body: (id, slot) => toolCallJson(id, read.args(slot)),
        connectClient: () => v1Client(daguMcp, read.args),
        ok: succeeded,
      },
      gateway: gatewaySpec(read, gateway),
      'gateway-traced': gatewaySpec(read, traced),
      floor: {
        origin: floor.url,
        path: () => '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: (id, slot) => toolCallJson(id, read.args(slot)),
        connectClient: () => v1Client(`${floor.url}/mcp`, read.args),
        ok: succeeded,
      },
    });
    const processes: Partial<Record<Target, MeasuredProcess>> = { gateway, 'gateway-traced': traced, floor };

    const sections: string[] = [];
    for (const readName of READS) {
      const read = reads[readName];
      if (read === undefined)
        throw new Error(`BENCH_READS: unknown read ${readName} (${READ_NAMES.join(', ')})`);
      sections.push(await benchRead(read, specsOf(read), processes));
    }
    if (sink.received.exports === 0)
      throw new Error('the traced gateway exported no spans: its figures would mean nothing');
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const version =
      ((await (await fetch(`${dagu.url}${dagu.apiBase}/health`)).json()) as { version?: string }).version ??
      '?';
    const text = [
      `Run ${date} UTC, Node ${servedNodeVersion()} (gateway and floor; load generators on ${process.version}), Dagu ${version}, ${CALLS} calls per cell, median of ${ROUNDS} rounds, ` +
        `load average ${loadBefore} before and ${loadAverage()} after. The gateway's caller is an API key. ` +
        `The traced gateway sent ${grouped(sink.received.exports)} OTLP exports (${grouped(sink.received.bytes / 1024)} KiB) to the sink.`,
      ...sections,
    ].join('\n');
    console.log(`\n${text}\n`);
    recordResults('peer-bench', "Against Dagu's own /mcp (`npm run bench:peer`)", text);
  });
}

interface CellKey {
  generator: Generator;
  concurrency: number;
  target: Target;
}

/** Measures one read on every path, generator and concurrency, interleaved; returns its table and ratios. */
async function benchRead(
  read: PeerRead,
  specs: Record<Target, PathSpec>,
  processes: Partial<Record<Target, MeasuredProcess>>,
): Promise<string> {
  // Every path answers a real read before anything is measured; then all are warmed up in turns.
  for (const target of TARGETS) {
    const probe = await measureHttp(specs[target], 1, 1);
    if (probe.failures > 0) throw new Error(`${target} does not answer the ${read.name} read`);
  }
  await warmUpInTurns(TARGETS, WARMUP, async (target, calls) => {
    const spec = specs[target];
    await measureHttp(spec, calls, 4);
    if (spec.connectClient) await measureClient(spec, Math.ceil(calls / 5), 4);
  });

  const cells: CellKey[] = GENERATORS.flatMap((generator) =>
    CONCURRENCIES.flatMap((concurrency) =>
      TARGETS.filter((target) => measured(generator, target)).map((target) => ({
        generator,
        concurrency,
        target,
      })),
    ),
  );
  const results = new Map<string, CellResult[]>();
  const key = (cell: CellKey) => `${cell.generator}|${cell.concurrency}|${cell.target}`;
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so that no path always runs first (or right after another).
    const offset = Math.floor((round * cells.length) / ROUNDS);
    for (const cell of [...cells.slice(offset), ...cells.slice(0, offset)]) {
      const result = await measureCell(
        specs[cell.target],
        cell.generator,
        cell.concurrency,
        processes[cell.target],
      );
      results.set(key(cell), [...(results.get(key(cell)) ?? []), result]);
    }
  }
  const summary = (generator: Generator, concurrency: number, target: Target) => {
    const rounds = results.get(key({ generator, concurrency, target })) ?? [];
    const cpu = rounds.flatMap((round) => (round.serverCpuMs === undefined ? [] : [round.serverCpuMs]));
    return {
      callsPerSecond: median(rounds.map((round) => round.callsPerSecond)),
      p50Ms: median(rounds.map((round) => round.p50Ms)),
      serverCpuMs: cpu.length > 0 ? median(cpu) : Number.NaN,
      failures: rounds.reduce((sum, round) => sum + round.failures, 0),
    };
  };

  const lines: string[] = [
    '',
    `### \`${read.name}\` (${read.described}): \`${JSON.stringify(read.args(0))}\``,
    '',
    '| generator | path | c=1 calls/s | c=1 p50 ms | c=16 calls/s | c=16 p50 ms | CPU ms/call of the serving process (c=1 / c=16) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const generator of GENERATORS) {
    for (const target of TARGETS.filter((candidate) => measured(generator, candidate))) {
      const one = summary(generator, 1, target);
      const many = summary(generator, 16, target);
      const cpu =
        processes[target] === undefined ? '' : `${fixed(one.serverCpuMs, 3)} / ${fixed(many.serverCpuMs, 3)}`;
      const failed = one.failures + many.failures > 0 ? ` (${one.failures + many.failures} failed)` : '';
      const label =
        generator === 'mcp-client' && target === 'rest'
          ? 'rest (undici)'
          : target === 'floor'
            ? 'floor (bare proxy)'
            : target;
      lines.push(
        `| ${generator} | ${label}${failed} | ${grouped(one.callsPerSecond)} | ${fixed(one.p50Ms, 2)} | ${grouped(many.callsPerSecond)} | ${fixed(many.p50Ms, 2)} | ${cpu} |`,
      );
    }
  }
  lines.push('', 'Ratios (same run):', '', ...ratios(read, summary));
  return lines.join('\n');
}

type Summary = (
  generator: Generator,
  concurrency: number,
  target: Target,
) => { callsPerSecond: number; p50Ms: number; serverCpuMs: number };

/** Issue 22's goals: ≥ 0.95× the bare proxy (c=1 on `run`; c=16 on the distinct reads, CPU ≤ 1.1×). */
function ratios(read: PeerRead, summary: Summary): string[] {
  const out: string[] = [];
  const verdict = (applies: boolean, met: boolean, goal: string) =>
    applies ? ` (goal ${goal}: ${met ? 'met' : 'not met'})` : '';
  const throughput = (generator: Generator, c: number, target: Target, base: Target) =>
    summary(generator, c, target).callsPerSecond / summary(generator, c, base).callsPerSecond;
  for (const generator of GENERATORS) {
    for (const c of CONCURRENCIES) {
      const floor = throughput(generator, c, 'gateway', 'floor');
      const goalHere = (c === 1 && read.name !== 'step_log') || (c === 16 && read.name === 'run_distinct');
      const cpu = summary(generator, c, 'gateway').serverCpuMs / summary(generator, c, 'floor').serverCpuMs;
      const cpuGoal = c === 16 && read.name === 'run_distinct';
      out.push(
        `- ${generator}, c=${c}: gateway ${fixed(floor, 2)}× the bare proxy${verdict(goalHere, floor >= 0.95, '≥ 0.95×')}, ` +
          `${fixed(throughput(generator, c, 'gateway', 'dagu-mcp'), 2)}× Dagu /mcp, ${fixed(throughput(generator, c, 'gateway', 'rest'), 2)}× REST; ` +
          `CPU per call ${fixed(cpu, 2)}× the bare proxy's${verdict(cpuGoal, cpu <= 1.1, '≤ 1.1×')}`,
      );
    }
  }
  // Tracing's cost (issue 21): the same gateway twice, off and on, plain HTTP, interleaved.
  const tracing = CONCURRENCIES.map((c) => {
    const off = summary('http', c, 'gateway');
    const on = summary('http', c, 'gateway-traced');
    const addedWallUs = (1e6 / on.callsPerSecond - 1e6 / off.callsPerSecond) * c;
    const addedCpuUs = (on.serverCpuMs - off.serverCpuMs) * 1000;
    return `c=${c}: throughput ${fixed(on.callsPerSecond / off.callsPerSecond, 2)}× untraced, ${fixed(addedWallUs, 0)} µs added per call, ${fixed(addedCpuUs, 0)} µs of gateway CPU added per call`;
  });
  out.push(`- tracing on (always_on, OTLP to a local sink) vs off, http: ${tracing.join('; ')}`);
  return out;
}

await main();
