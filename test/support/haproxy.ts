// A real HAProxy (Debian's package, scripts/deploy-tools.sh) running deploy/haproxy/haproxy.cfg on
// 127.0.0.1 in front of the gateway replicas given, its stats CSV read for each server's state.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseEnv, freePort } from './bin.ts';
import { repoPath } from './deploy-tools.ts';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls `check` every 50 ms until it holds; fails naming `what` after `withinMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, withinMs = 30_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await check())) {
    assert.ok(performance.now() < deadline, `${what} within ${withinMs} ms`);
    await sleep(50);
  }
}

export interface RunningHaproxy {
  /** `http://127.0.0.1:<port>`: where callers connect. */
  frontUrl: string;
  /** HAProxy's view of each gateway server of a backend (`ready` or `live`): `UP`, `DOWN`, … */
  serverStates(backend: string): Promise<Record<string, string>>;
  /** The last lines of its log. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * Starts HAProxy with the repository's configuration, its three servers `gateway1..3` at `gateways`
 * (`127.0.0.1:<port>` each), logging to `<home>/haproxy.log`; resolves once its stats page answers.
 */
export async function startHaproxy(
  binary: string,
  home: string,
  gateways: readonly [string, string, string],
): Promise<RunningHaproxy> {
  const front = await freePort();
  const stats = await freePort();
  const statsUrl = `http://127.0.0.1:${stats}`;
  const logPath = join(home, 'haproxy.log');
  const log = openSync(logPath, 'a');
  const child: ChildProcess = spawn(binary, ['-db', '-f', repoPath('deploy', 'haproxy', 'haproxy.cfg')], {
    stdio: ['ignore', log, log],
    detached: true,
    env: {
      ...baseEnv(),
      HAPROXY_BIND: `127.0.0.1:${front}`,
      HAPROXY_STATS: `127.0.0.1:${stats}`,
      GATEWAY_1: gateways[0],
      GATEWAY_2: gateways[1],
      GATEWAY_3: gateways[2],
    },
  });
  const serverStates = async (backend: string) => {
    const csv = await (await fetch(`${statsUrl}/stats;csv`)).text();
    const states: Record<string, string> = {};
    for (const line of csv.split('\n')) {
      const [proxy, server, ...fields] = line.split(',');
      if (proxy === backend && server?.startsWith('gateway')) states[server] = fields[15] ?? '';
    }
    return states;
  };
  await waitFor('HAProxy stats', () =>
    fetch(`${statsUrl}/stats;csv`).then(
      (response) => response.ok,
      () => false,
    ),
  );
  return {
    frontUrl: `http://127.0.0.1:${front}`,
    serverStates,
    logTail: (lines = 20) => readFileSync(logPath, 'utf8').split('\n').slice(-lines).join('\n'),
    async stop() {
      if (child.pid === undefined || child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}
