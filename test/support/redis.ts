// A real redis-server (Debian's package, installed by scripts/redis-server.sh) on 127.0.0.1 with a
// free port, no persistence, in a temporary folder. A missing redis-server fails the test, never skips.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT } from './bin.ts';

let binary: string | undefined;

/** The redis-server binary, installed on first use. */
export function redisServerBinary(): string {
  if (binary !== undefined) return binary;
  const prepared = spawnSync('bash', [join(ROOT, 'scripts', 'redis-server.sh')], { encoding: 'utf8' });
  const path = prepared.stdout.trim().split('\n').at(-1);
  if (prepared.status !== 0 || !path) {
    throw new Error(`redis-server is needed and could not be installed:\n${prepared.stderr}`);
  }
  binary = path;
  return path;
}

export interface RedisServer {
  port: number;
  url: string;
  /** Kills it at once (SIGKILL): what a crashed or unreachable Redis looks like to a client. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const executable = redisServerBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-'));
  let child: ChildProcess | undefined;

  const launch = async () => {
    const started = spawn(
      executable,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout!.on('data', onData);
      started.stderr!.on('data', onData);
      started.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${output}`));
      });
    });
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((done) => running.once('exit', done));
    running.kill('SIGKILL');
    await exited;
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: launch,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
