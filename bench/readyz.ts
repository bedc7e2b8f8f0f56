// How long `/readyz` takes to answer while Dagu hangs: `npm run bench:readyz`.
//
// A gateway in front of an upstream that accepts every request and never answers (the fault server of
// the tests): `/readyz` answers from the readiness probe's cached result, so it should stay far below
// the probe's own timeout (DAGU_PROBE_TIMEOUT_MS, 750 ms by default) and below a second from the first
// request on. The figure depends on the machine's load, so it is measured here; the tests
// (test/integration/http/readiness.e2e.test.ts, test/unit/http/health.test.ts) check what /readyz says
// and that it answers from the cache.
//
//   BENCH_REQUESTS   /readyz requests (default 50)
import { startCapturedGateway } from '../test/support/auth-fixtures.ts';
import { FAULTS, startFaultServer } from '../test/support/fake-dagu-faults.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);

const upstream = await startFaultServer();
const gateway = await startCapturedGateway({
  DAGU_URL: `${upstream.url}/${FAULTS.hang}`,
  DAGU_API_BASE: '/api/v1',
  DAGU_TIMEOUT_MS: '20000',
  DAGU_PROBE_INTERVAL_MS: '200',
});
try {
  const timings: number[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const response = await fetch(`${gateway.baseUrl}/readyz`);
    await response.arrayBuffer();
    timings.push(performance.now() - started);
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  }
  const sorted = [...timings].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  console.log(
    `/readyz with a hanging upstream: n=${sorted.length} first=${timings[0]!.toFixed(1)} ms ` +
      `p50=${at(0.5).toFixed(1)} ms p99=${at(0.99).toFixed(1)} ms max=${sorted.at(-1)!.toFixed(1)} ms ` +
      `(statuses ${[...statuses].map(([status, count]) => `${status}×${count}`).join(', ')})`,
  );
} finally {
  await gateway.close();
  await upstream.close();
}
