// Per-call cost of the gateway, measured in one run against the real Dagu: `npm run bench`.
// Each case sends the same number of requests over a keep-alive pool at a fixed concurrency and prints
// throughput, latency percentiles and the gateway's CPU per request, plus ratios between the cases.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { seedDagu, startDagu } from '../test/support/dagu.ts';
import { startGateway } from '../test/support/gateway.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WARMUP = 200;

interface Case {
  name: string;
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
}

const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'dagu_read',
};

function toolCall(args: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'dagu_read',
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
}

async function measure(pool: Pool, spec: Case, count: number) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next += 1;
        const t0 = performance.now();
        const response = await pool.request({
          path: spec.path,
          method: spec.method,
          headers: spec.headers ?? {},
          ...(spec.body ? { body: spec.body } : {}),
        });
        const text = await response.body.text();
        if (response.statusCode !== 200 || text.includes('"isError":true')) failures += 1;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return {
    rps: count / seconds,
    p50: pct(0.5),
    p99: pct(0.99),
    // The gateway runs in this process, so process CPU includes the load generator: an upper bound.
    cpuMicrosPerRequest: (cpu.user + cpu.system) / count,
    failures,
  };
}

async function main() {
  const dagu = await startDagu();
  const seed = await seedDagu(dagu);
  const gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    RATE_LIMIT_PER_MINUTE: '1000000',
    MAX_CONCURRENT_CALLS_PER_IDENTITY: '1000',
  });
  const cases: Case[] = [
    {
      name: 'gateway GET /healthz (plain Fastify route)',
      origin: gateway.baseUrl,
      path: '/healthz',
      method: 'GET',
    },
    {
      name: 'tools/call reference (no upstream)',
      origin: gateway.baseUrl,
      path: '/mcp',
      method: 'POST',
      headers: MODERN_HEADERS,
      body: toolCall({ target: 'reference', name: 'tools' }),
    },
    {
      name: 'Dagu REST GET run details (direct)',
      origin: dagu.url,
      path: `${dagu.apiBase}/dag-runs/${seed.dags.fails}/${seed.runs.fails}`,
      method: 'GET',
    },
    {
      name: 'tools/call run (through the gateway)',
      origin: gateway.baseUrl,
      path: '/mcp',
      method: 'POST',
      headers: MODERN_HEADERS,
      body: toolCall({ target: 'run', name: seed.dags.fails, dagRunId: seed.runs.fails }),
    },
    {
      name: 'tools/call invalid input (validation only)',
      origin: gateway.baseUrl,
      path: '/mcp',
      method: 'POST',
      headers: MODERN_HEADERS,
      body: toolCall({ target: 'run', name: 'x' }),
    },
  ];
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  try {
    for (const spec of cases) {
      const pool = new Pool(spec.origin, { connections: CONCURRENCY, pipelining: 1 });
      await measure(pool, spec, WARMUP);
      const result = await measure(pool, spec, REQUESTS);
      await pool.close();
      results.set(spec.name, result);
    }
  } finally {
    await gateway.close();
    await dagu.stop();
  }
  console.log(`\n${REQUESTS} requests per case, concurrency ${CONCURRENCY}, Node ${process.version}\n`);
  console.log(
    'case'.padEnd(48),
    'req/s'.padStart(8),
    'p50 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'cpu µs/req'.padStart(11),
  );
  for (const [name, r] of results) {
    const failed = name.includes('invalid') ? '' : r.failures > 0 ? `  (${r.failures} failed)` : '';
    console.log(
      name.padEnd(48),
      r.rps.toFixed(0).padStart(8),
      r.p50.toFixed(2).padStart(8),
      r.p99.toFixed(2).padStart(8),
      r.cpuMicrosPerRequest.toFixed(0).padStart(11),
      failed,
    );
  }
  const [plain, reference, direct, run] = cases.map((spec) => results.get(spec.name)!);
  console.log('\nratios (same run):');
  console.log(
    `  MCP tools/call vs plain route, throughput:        ${(plain!.rps / reference!.rps).toFixed(1)}x slower`,
  );
  console.log(`  run through gateway vs direct Dagu REST, p50:    ${(run!.p50 / direct!.p50).toFixed(2)}x`);
  console.log(
    `  run through gateway vs direct Dagu REST, req/s:  ${(direct!.rps / run!.rps).toFixed(2)}x fewer`,
  );
}

await main();
