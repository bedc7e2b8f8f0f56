// A real Dagu of its own, on a fixed port and home, for tests that stop, hang (SIGSTOP) and start it
// again at the same address; the shared test Dagu (getTestDagu) must never be disturbed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAGU_PIN, daguBinary, freePort } from './dagu.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A real Dagu on a fixed port and home, so it can be stopped and started again at the same address. */
export class RestartableDagu {
  private child: ChildProcess | undefined;
  readonly url: string;

  constructor(
    private readonly home: string,
    private readonly port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    mkdirSync(join(this.home, 'dags'), { recursive: true });
    writeFileSync(join(this.home, 'dags', '.examples-created'), '');
    this.child = spawn(await daguBinary(), ['start-all'], {
      cwd: this.home,
      detached: true,
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: this.home,
        DAGU_HOME: this.home,
        DAGU_HOST: '127.0.0.1',
        DAGU_PORT: String(this.port),
        DAGU_AUTH_MODE: 'none',
        DAGU_SKIP_EXAMPLES: 'true',
        // 2.x: no gRPC coordinator; 1.x: its coordinator on a free port.
        DAGU_COORDINATOR_ENABLED: 'false',
        DAGU_COORDINATOR_HOST: '127.0.0.1',
        DAGU_COORDINATOR_PORT: String(await freePort()),
      },
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const response = await fetch(`${this.url}${DAGU_PIN.apiBase}/health`, {
          signal: AbortSignal.timeout(500),
        });
        if (response.ok) return;
      } catch {
        // Not yet listening.
      }
      if (Date.now() > deadline) throw new Error('Dagu did not start within 30 s');
      await sleep(50);
    }
  }

  /** SIGSTOP / SIGCONT to the whole process group: a real Dagu that hangs, then goes on. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (this.child?.pid !== undefined) process.kill(-this.child.pid, signal);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.child = undefined;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid, 'SIGCONT');
    process.kill(-child.pid, 'SIGKILL');
    await gone;
  }
}
