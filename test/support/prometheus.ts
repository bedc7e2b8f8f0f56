// A real Prometheus for the tests (the binary from scripts/deploy-tools.sh), on a free 127.0.0.1 port
// with its own home: the config written there, its data and its log beside it.
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './dagu.ts';

export interface RunningPrometheus {
  /** `http://127.0.0.1:<port>`: the HTTP API's origin. */
  api: string;
  /** Whether the process has ended (a config it refused, a port taken). */
  exited(): boolean;
  /** The last `lines` lines of its log. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

/** Starts Prometheus with `config` (written as YAML into `home`) and any extra flags. */
export async function startPrometheus(
  binary: string,
  home: string,
  config: object,
  flags: readonly string[] = [],
): Promise<RunningPrometheus> {
  const configFile = join(home, 'prometheus.yml');
  const logFile = join(home, 'prometheus.log');
  writeFileSync(configFile, stringify(config));
  const port = await freePort();
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(home, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...flags,
    ],
    { stdio: ['ignore', log, log], detached: true },
  );
  return {
    api: `http://127.0.0.1:${port}`,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    logTail: (lines = 15) => readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n'),
    stop: async () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}
