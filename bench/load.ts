/**
 * What bench:peer and bench:heavy share to drive load: a closed loop of callers, plain HTTP calls
 * through undici, the floor proxy, the API key the gateway is started with, and the marked blocks of
 * bench/RESULTS.md.
 *
 * Distinct reads: every call gets a `slot`, the caller's number plus its count of earlier calls times the
 * concurrency. A path maps the slot onto its targets (slot modulo their count), so with as many targets
 * as callers (or a multiple of them) each caller keeps its own target, no two calls in flight read the
 * same thing, and at concurrency 1 the targets take turns.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { freePort } from '../test/support/dagu.ts';
import { benchNode, cpuSecondsOf, ROOT } from './peer-support.ts';
import { percentile } from './stats.ts';

export interface CellResult {
  /** Calls made (autocannon runs for a duration, so its count varies). */
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU milliseconds per call of the serving process, when one is measured. */
  serverCpuMs?: number;
  failures: number;
}

/** Calls per turn when several processes are warmed up together. */
const WARMUP_TURN = 2000;

/**
 * `total` warm-up calls for each of `names`, served in turns of at most WARMUP_TURN calls (`serve` gets
 * one process and that turn's calls), as the measured rounds are served. A process left idle while the
 * others warmed up met a full collection in that pause, which discarded its optimized code, and it
 * entered the measured calls compiling that code again (bench/RESULTS.md, fourteenth round).
 */
export async function warmUpInTurns<Name>(
  names: readonly Name[],
  total: number,
  serve: (name: Name, calls: number) => Promise<unknown>,
): Promise<void> {
  const turns = Math.max(1, Math.ceil(total / WARMUP_TURN));
  for (let turn = 0; turn < turns; turn++) {
    for (const name of names) await serve(name, Math.ceil(total / turns));
  }
}

/** `calls` calls made by `concurrency` callers one after another (closed loop): rate, latencies, failures. */
export async function closedLoop(
  calls: number,
  concurrency: number,
  call: (id: string, slot: number) => Promise<boolean>,
): Promise<CellResult> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, caller) => {
      for (let own = 0; next < calls; own++) {
        next += 1;
        const t0 = performance.now();
        const ok = await call(`call-${next}`, caller + own * concurrency).catch(() => false);
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

export interface HttpRequestSpec {
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** One call of a path over plain HTTP: its requests (made at once) for a slot and a JSON-RPC id. */
export interface HttpPath {
  origin: string;
  requests(slot: number, id: string): HttpRequestSpec[];
  /** Whether one answer is a successful read. */
  ok(status: number, text: string): boolean;
}

export async function measureHttp(path: HttpPath, calls: number, concurrency: number): Promise<CellResult> {
  const pool = new Pool(path.origin, { connections: concurrency * 2, pipelining: 1 });
  try {
    return await closedLoop(calls, concurrency, async (id, slot) => {
      const answers = await Promise.all(
        path.requests(slot, id).map(async (request) => {
          const response = await pool.request(request);
          const text = await response.body.text();
          return path.ok(response.statusCode, text);
        }),
      );
      return answers.every(Boolean);
    });
  } finally {
    await pool.close();
  }
}

export const toolCallJson = (id: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'dagu_read', arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

/** A tools/call answer (JSON, parsed here) that carries a successful read. */
export function succeededRead(status: number, text: string): boolean {
  if (status !== 200) return false;
  const body: unknown = JSON.parse(text);
  if (body === null || typeof body !== 'object') return false;
  const result = (body as { result?: { structuredContent?: unknown; isError?: boolean } }).result;
  return result?.structuredContent !== undefined && result.isError !== true;
}

/** The headers and `_meta` of a stateless (2026-07-28) tools/call to the gateway, as an API-key caller. */
export function gatewayCall(apiKey: string) {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${apiKey}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'dagu_read',
    },
    meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  };
}

/**
 * An API key file as production has it (the key's SHA-256 only; role viewer, no allowlist, so reads
 * page upstream as for any caller that may read every DAG). Returns the file and the key.
 */
export function writeApiKeyFile(): { file: string; key: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-keys-'));
  const key = `dmg_${randomBytes(32).toString('base64url')}`;
  const sha256 = createHash('sha256').update(key).digest('hex');
  const file = join(dir, 'keys.json');
  writeFileSync(
    file,
    JSON.stringify({ keys: [{ name: 'bench', sha256, surfaces: ['mcp'], role: 'viewer' }] }),
  );
  return { file, key, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A process whose CPU time the bench reads while it measures. */
export interface MeasuredProcess {
  pid: number;
  cpuSeconds(): number;
}

/** Starts bench/floor-proxy.mjs (plain node, its own process; node:http, or a bare Fastify app) in front of a Dagu. */
export async function startFloor(
  daguUrl: string,
  apiBase: string,
  options: {
    nodeArgs?: string[];
    server?: 'node:http' | 'fastify';
    env?: Record<string, string>;
    /** A file for the process's output (V8's traces), else this process's own output. */
    log?: string;
  } = {},
) {
  const port = await freePort();
  const output = options.log === undefined ? 'inherit' : openSync(options.log, 'a');
  const child = spawn(
    benchNode() ?? process.execPath,
    [...(options.nodeArgs ?? []), join(ROOT, 'bench', 'floor-proxy.mjs')],
    {
      stdio: ['ignore', output, output, 'ipc'],
      env: {
        ...process.env,
        FLOOR_PORT: String(port),
        FLOOR_DAGU: daguUrl,
        FLOOR_API_BASE: apiBase,
        FLOOR_SERVER: options.server ?? 'node:http',
        ...options.env,
      },
    },
  );
  // The child has its own copy of the file's descriptor.
  if (typeof output === 'number') closeSync(output);
  await new Promise<void>((ready, failed) => {
    child.once('message', () => ready());
    child.once('exit', (code) => failed(new Error(`the floor proxy exited (${code})`)));
  });
  const pid = child.pid!;
  return {
    url: `http://127.0.0.1:${port}`,
    pid,
    cpuSeconds: () => cpuSecondsOf(pid),
    /** Ends the process (SIGTERM: floor-proxy.mjs exits, so a `--cpu-prof` profile is written) and waits. */
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill();
      }),
  };
}

export const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
export const grouped = (value: number) => Math.round(value).toLocaleString('en-US');

/** Keeps the last run in bench/RESULTS.md between `<!-- name:start -->` and `<!-- name:end -->`. */
export function recordResults(name: string, heading: string, text: string) {
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const current = readFileSync(file, 'utf8');
  const block = `${start}\n${text}\n${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  writeFileSync(
    file,
    from >= 0 && to > from
      ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n## ${heading}\n\n${block}\n`,
  );
}

/**
 * Runs a benchmark's body, then every clean-up step (each failure printed, none stopping the rest). A
 * failure of the body is printed first, since a clean-up's own failure (a Dagu still writing) would
 * hide it, and sets the exit code.
 */
export async function runThenStop(
  stops: ReadonlyArray<() => unknown>,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  }
  for (const stop of stops) {
    try {
      await stop();
    } catch (error) {
      console.error(`clean-up: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
