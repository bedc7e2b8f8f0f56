// The package's bin (`dagu-mcp-gateway`, the compiled build) as users run it: built when dist/ is
// older than the sources, spawned as its own process, its output captured.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
};
/** The bin's script, from package.json. */
export const BIN = join(ROOT, PACKAGE.bin['dagu-mcp-gateway'] ?? 'missing-bin');

function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` unless dist/ is newer than every source file. */
export function ensureBuilt(): void {
  let built = 0;
  try {
    built = statSync(BIN).mtimeMs;
  } catch {}
  if (built > newestIn(join(ROOT, 'src'))) return;
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

/** A minimal environment: what a user's shell would pass, nothing of the test runner's. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    ...extra,
  };
}

export interface BinProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` (`https://` with TLS), from the gateway's "listening" log line. */
  address: string;
  mcpUrl: string;
  /** Everything written so far to stdout and stderr. */
  stdout(): string;
  stderr(): string;
  /** SIGINT, and waits for the exit (no drain). */
  stop(): Promise<void>;
}

export { freePort } from './dagu.ts';

let outsideClone: string | undefined;
/**
 * An empty folder outside the clone, where a spawned gateway starts by default: the command reads
 * `.env` from its working folder, and a user's `.env` in the clone (the README's deploy step writes
 * one) must not decide a test. Removed when the process exits.
 */
export function folderWithoutDotEnv(): string {
  if (outsideClone === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'gateway-cwd-'));
    outsideClone = folder;
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  }
  return outsideClone;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Spawns the bin serving HTTP and waits for its "listening" line. */
export async function startBin(options: {
  env: Record<string, string>;
  args?: string[];
  cwd?: string;
}): Promise<BinProcess> {
  const child = spawn(process.execPath, [BIN, ...(options.args ?? [])], {
    cwd: options.cwd ?? folderWithoutDotEnv(),
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    // SIGINT stops without the drain SIGTERM begins (DRAIN_MS): tests that need it send SIGTERM.
    child.kill('SIGINT');
    await exited;
  };
  const deadline = Date.now() + 20_000;
  let address: string | undefined;
  while (address === undefined) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the gateway did not start (exit ${child.exitCode}):\n${stdout}${stderr}`);
    }
    address = /"address":"(https?:\/\/127\.0\.0\.1:\d+)"/.exec(stdout)?.[1];
    if (address === undefined) await sleep(25);
  }
  return { child, address, mcpUrl: `${address}/mcp`, stdout: () => stdout, stderr: () => stderr, stop };
}
