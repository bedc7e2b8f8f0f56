/**
 * The real Dagu for integration tests: builds the pinned release (scripts/build-dagu.sh), starts
 * `dagu start-all` on 127.0.0.1 with a temporary DAGU_HOME, writes real DAG files and runs them
 * through Dagu's REST API.
 *
 * The test runner (scripts/run-tests.mjs) starts and seeds one instance for the whole run and passes
 * it to the test processes in DAGU_TEST_URL, DAGU_TEST_API_BASE, DAGU_TEST_HOME and DAGU_TEST_SEED;
 * `getTestDagu()` returns that instance, or starts and seeds its own when a file runs alone.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PIN = JSON.parse(readFileSync(join(ROOT, 'scripts', 'dagu-version.json'), 'utf8')) as {
  module: string;
  version: string;
  apiBase: string;
  generation: 1 | 2;
};

/** The pinned Dagu: module, version, REST base and generation (scripts/dagu-version.json). */
export const DAGU_PIN = Object.freeze(PIN);

/**
 * Dagu runs in this zone so that it writes timestamps with a local offset (`+09:00`), as a real
 * server outside UTC does; the gateway must turn them into UTC.
 */
export const DAGU_TEST_TZ = 'Asia/Tokyo';

export interface DaguInstance {
  /** Base URL without the API prefix, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** REST prefix: `/api/v2` for Dagu 1.x, `/api/v1` for 2.x. */
  apiBase: string;
  generation: 1 | 2;
  /** DAGU_HOME of the instance (on this machine). */
  home: string;
  /** Bearer token Dagu requires, when started with one. */
  token?: string;
  /** Stops the process this helper started (its whole process group) and removes the home. No-op for a shared instance. */
  stop(): Promise<void>;
}

export interface StartDaguOptions {
  /** Require this static bearer token (DAGU_AUTH_TOKEN); default: no authentication. */
  token?: string;
  /** Extra environment for Dagu (e.g. `DAGU_TZ`). */
  env?: Record<string, string>;
  /** How long to wait for the health route, default 30 s. */
  readyTimeoutMs?: number;
}

let cachedBinary: string | undefined;

/** Path of the pinned Dagu binary, building it on first use. Throws with the build's reason. */
export function daguBinary(): string {
  if (cachedBinary !== undefined) return cachedBinary;
  const result = spawnSync('bash', [join(ROOT, 'scripts', 'build-dagu.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  const lines = (result.stdout ?? '').trim().split('\n');
  const binary = lines.at(-1)?.trim();
  if (result.status !== 0 || binary === undefined || binary === '') {
    const reason =
      (result.stderr ?? '').trim().split('\n').slice(-15).join('\n') || String(result.error ?? '');
    throw new Error(`cannot build Dagu ${PIN.module}@${PIN.version} (scripts/build-dagu.sh):\n${reason}`);
  }
  cachedBinary = binary;
  return binary;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** SIGKILL to the group, then wait (synchronously, at most 2 s) until it is gone: for exit paths. */
function killGroupAndWait(pid: number | undefined): void {
  if (pid === undefined) return;
  killGroup(pid, 'SIGKILL');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    Atomics.wait(pause, 0, 0, 10);
  }
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Synchronous clean-ups of the instances this process started and has not stopped yet. */
const LIVE = new Set<() => void>();
let lastResortInstalled = false;

/**
 * If this process exits or is ended by a signal before `stop()` ran (a test process killed by the
 * runner, Ctrl-C), its Dagu processes are killed and their homes removed; the signal then takes its
 * normal course.
 */
function installLastResort(): void {
  if (lastResortInstalled) return;
  lastResortInstalled = true;
  const cleanUp = () => {
    for (const clean of LIVE) clean();
    LIVE.clear();
  };
  process.once('exit', cleanUp);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of signals) {
    const onSignal = () => {
      cleanUp();
      for (const [other, handler] of handlers) process.removeListener(other, handler);
      process.kill(process.pid, signal);
    };
    handlers.set(signal, onSignal);
    process.once(signal, onSignal);
  }
}

/** Starts `dagu start-all` on free loopback ports with a fresh home and waits until it answers. */
export async function startDagu(options: StartDaguOptions = {}): Promise<DaguInstance> {
  const binary = daguBinary();
  const home = mkdtempSync(join(tmpdir(), 'dagu-test-'));
  mkdirSync(join(home, 'dags'), { recursive: true });
  // Dagu writes example DAGs into an empty DAGs folder on first start; tests want only their own.
  writeFileSync(join(home, 'dags', '.examples-created'), '# no examples in tests\n');
  const [port, coordinatorPort] = [await freePort(), await freePort()];
  const logPath = join(home, 'dagu.log');
  const logFd = openSync(logPath, 'a');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DAGU_HOME: home,
    DAGU_HOST: '127.0.0.1',
    DAGU_PORT: String(port),
    // start-all always opens the coordinator's listener; its default port may be taken.
    DAGU_COORDINATOR_HOST: '127.0.0.1',
    DAGU_COORDINATOR_PORT: String(coordinatorPort),
    DAGU_TZ: DAGU_TEST_TZ,
    DAGU_SKIP_EXAMPLES: 'true',
    ...(options.token === undefined ? { DAGU_AUTH_MODE: 'none' } : { DAGU_AUTH_TOKEN: options.token }),
    ...options.env,
  };
  // detached: Dagu leads its own process group, so stop() can end it and every step it spawned.
  const child = spawn(binary, ['start-all'], {
    cwd: home,
    env,
    detached: true,
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const emergencyStop = () => {
    killGroupAndWait(child.pid);
    rmSync(home, { recursive: true, force: true });
  };
  LIVE.add(emergencyStop);
  installLastResort();
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    LIVE.delete(emergencyStop);
    killGroup(child.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      exited(child).then(() => true),
      new Promise<boolean>((resolveLate) => {
        timer = setTimeout(() => resolveLate(false), 5000);
      }),
    ]);
    clearTimeout(timer);
    if (!done) {
      killGroup(child.pid, 'SIGKILL');
      await exited(child);
    }
    rmSync(home, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  const headers: Record<string, string> =
    options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = tail(logPath);
      await stop();
      throw new Error(
        `Dagu exited during start-up (code ${child.exitCode}, signal ${child.signalCode}):\n${log}`,
      );
    }
    try {
      const response = await fetch(`${url}${PIN.apiBase}/health`, {
        headers,
        signal: AbortSignal.timeout(1000),
      });
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      const log = tail(logPath);
      await stop();
      throw new Error(`Dagu did not become ready within ${options.readyTimeoutMs ?? 30_000} ms:\n${log}`);
    }
    await sleep(50);
  }
  const instance: DaguInstance = { url, apiBase: PIN.apiBase, generation: PIN.generation, home, stop };
  if (options.token !== undefined) instance.token = options.token;
  return instance;
}

// ---- seeding --------------------------------------------------------------------------------

/** DAG names the seed writes. */
export const SEED_DAGS = Object.freeze({
  /** Two steps (names with a space), stdout and stderr; run twice. */
  twoSteps: 'two-steps',
  /** One step that fails with a message on stderr. */
  fails: 'fails',
  /** Calls `child`, so the run has a sub run. */
  parent: 'parent',
  child: 'child',
  /** A name with a dot; labelled `alpha`. */
  dotted: 'dotted.name',
  /** Labelled `alpha` and `beta`. */
  labelled: 'labelled',
  /** One step printing 3000 lines. */
  manyLines: 'many-lines',
  /** Never started. */
  neverRan: 'never-ran',
  /** Waits at an approval gate (1.x `hitl` executor). */
  gate: 'approval-gate',
  /** A definition with an error (depends on a missing step); never started. */
  broken: 'broken-spec',
  /** Ran, then its scheduler log file was removed. */
  goneLog: 'gone-log',
});

export interface DaguSeed {
  dags: typeof SEED_DAGS;
  runs: {
    twoStepsFirst: string;
    twoStepsSecond: string;
    fails: string;
    parent: string;
    /** The child run of `parent`. */
    childSub: string;
    dotted: string;
    labelled: string;
    manyLines: string;
    gate: string;
    goneLog: string;
  };
  /** Steps and texts the seeded DAGs print, for assertions. */
  facts: {
    twoStepsStepNames: [string, string];
    failsStepName: string;
    failsStderr: string;
    failsExitCode: number;
    manyLinesCount: number;
    labels: { dotted: string[]; labelled: string[] };
    gatePrompt: string;
    gateInput: string[];
    gateRequired: string[];
  };
  /** Number of DAG files written. */
  dagCount: number;
}

const labelsKey = PIN.generation === 1 ? 'tags' : 'labels';

const DAG_FILES: Record<string, string> = {
  [SEED_DAGS.twoSteps]: `description: Two steps writing stdout and stderr
steps:
  - name: step one
    command: sh -c 'echo "hello from step one"; echo "warning from step one" >&2'
  - name: step two
    command: echo "second step"
    depends: [step one]
`,
  [SEED_DAGS.fails]: `steps:
  - name: boom
    command: sh -c 'echo "about to fail"; echo "disk quota exceeded" >&2; exit 3'
`,
  [SEED_DAGS.parent]: `steps:
  - name: call child
    call: ${SEED_DAGS.child}
`,
  [SEED_DAGS.child]: `steps:
  - name: inner step
    command: echo "inside the child"
`,
  [SEED_DAGS.dotted]: `${labelsKey}: [alpha]
steps:
  - name: s
    command: echo dotted
`,
  [SEED_DAGS.labelled]: `${labelsKey}: [alpha, beta]
steps:
  - name: s
    command: echo labelled
`,
  [SEED_DAGS.manyLines]: `steps:
  - name: count
    command: seq 1 3000
`,
  [SEED_DAGS.neverRan]: `description: A DAG that never ran
steps:
  - name: idle
    command: "true"
`,
  [SEED_DAGS.gate]: `steps:
  - name: prepare
    command: echo ready
  - name: approve release
    executor:
      type: hitl
      config:
        prompt: Ship the release?
        input: [reason, ticket]
        required: [reason]
    depends: [prepare]
  - name: after approval
    command: echo shipped
    depends: [approve release]
`,
  [SEED_DAGS.broken]: `steps:
  - name: a
    command: echo a
    depends: [missing-step]
`,
  [SEED_DAGS.goneLog]: `steps:
  - name: only
    command: echo gone
`,
};

type Json = Record<string, unknown>;

/** A small REST client for seeding and for checks in tests (not the gateway's client). */
export async function daguApi(
  instance: Pick<DaguInstance, 'url' | 'apiBase' | 'token'>,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (instance.token !== undefined) headers.authorization = `Bearer ${instance.token}`;
  const request: RequestInit = { method: init.method ?? 'GET', headers, signal: AbortSignal.timeout(10_000) };
  if (init.body !== undefined) request.body = JSON.stringify(init.body);
  const response = await fetch(`${instance.url}${instance.apiBase}${path}`, request);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Plain text stays text.
  }
  return { status: response.status, body };
}

async function startRun(instance: DaguInstance, name: string): Promise<string> {
  const { status, body } = await daguApi(instance, `/dags/${encodeURIComponent(name)}/start`, {
    method: 'POST',
    body: {},
  });
  const dagRunId = (body as { dagRunId?: unknown } | undefined)?.dagRunId;
  if (status !== 200 || typeof dagRunId !== 'string') {
    throw new Error(`seed: starting ${name} failed: HTTP ${status} ${JSON.stringify(body)}`);
  }
  return dagRunId;
}

const TERMINAL: ReadonlySet<number> = new Set([2, 3, 4, 6, 8]);

/** Waits until the run's status is one of `until` (default: any terminal status). */
async function waitForRun(
  instance: DaguInstance,
  name: string,
  dagRunId: string,
  until: ReadonlySet<number> = TERMINAL,
): Promise<Json> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status, body } = await daguApi(
      instance,
      `/dag-runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}`,
    );
    const details = (body as { dagRunDetails?: Json } | undefined)?.dagRunDetails;
    // Dagu records a terminal status a moment before the finish time: wait for both.
    const finished =
      typeof details?.finishedAt === 'string' && details.finishedAt !== '' && details.finishedAt !== '-';
    const terminal = TERMINAL.has(details?.status as number);
    if (
      status === 200 &&
      details !== undefined &&
      until.has(details.status as number) &&
      (!terminal || finished)
    ) {
      return details;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `seed: run ${name}/${dagRunId} did not reach ${[...until]} (last: HTTP ${status} ${JSON.stringify(body)})`,
      );
    }
    await sleep(50);
  }
}

/**
 * Writes the seed DAGs into the instance's `dags` folder, runs them through the REST API and waits for
 * their end (the approval gate: until it waits). Returns the run ids.
 */
export async function seedDagu(instance: DaguInstance): Promise<DaguSeed> {
  const dagsDir = join(instance.home, 'dags');
  mkdirSync(dagsDir, { recursive: true });
  for (const [name, spec] of Object.entries(DAG_FILES)) writeFileSync(join(dagsDir, `${name}.yaml`), spec);

  // The first run of two-steps ends before the second starts, so "latest" and the order are certain.
  const twoStepsFirst = await startRun(instance, SEED_DAGS.twoSteps);
  await waitForRun(instance, SEED_DAGS.twoSteps, twoStepsFirst);

  const names = [
    SEED_DAGS.twoSteps,
    SEED_DAGS.fails,
    SEED_DAGS.parent,
    SEED_DAGS.dotted,
    SEED_DAGS.labelled,
    SEED_DAGS.manyLines,
    SEED_DAGS.gate,
    SEED_DAGS.goneLog,
  ] as const;
  const ids = await Promise.all(names.map((name) => startRun(instance, name)));
  const byName = Object.fromEntries(names.map((name, i) => [name, ids[i] as string])) as Record<
    (typeof names)[number],
    string
  >;
  const details = await Promise.all(
    names.map((name) =>
      waitForRun(instance, name, byName[name], name === SEED_DAGS.gate ? new Set([7]) : undefined),
    ),
  );
  const parentDetails = details[names.indexOf(SEED_DAGS.parent)] as Json;
  const parentNode = (parentDetails.nodes as Json[])[0] as Json;
  const childSub = ((parentNode.subRuns as Json[])[0] as Json).dagRunId as string;

  const goneLogDetails = details[names.indexOf(SEED_DAGS.goneLog)] as Json;
  unlinkSync(goneLogDetails.log as string);

  return {
    dags: SEED_DAGS,
    runs: {
      twoStepsFirst,
      twoStepsSecond: byName[SEED_DAGS.twoSteps],
      fails: byName[SEED_DAGS.fails],
      parent: byName[SEED_DAGS.parent],
      childSub,
      dotted: byName[SEED_DAGS.dotted],
      labelled: byName[SEED_DAGS.labelled],
      manyLines: byName[SEED_DAGS.manyLines],
      gate: byName[SEED_DAGS.gate],
      goneLog: byName[SEED_DAGS.goneLog],
    },
    facts: {
      twoStepsStepNames: ['step one', 'step two'],
      failsStepName: 'boom',
      failsStderr: 'disk quota exceeded',
      failsExitCode: 3,
      manyLinesCount: 3000,
      labels: { dotted: ['alpha'], labelled: ['alpha', 'beta'] },
      gatePrompt: 'Ship the release?',
      gateInput: ['reason', 'ticket'],
      gateRequired: ['reason'],
    },
    dagCount: Object.keys(DAG_FILES).length,
  };
}

// ---- the shared instance --------------------------------------------------------------------

export interface TestDagu extends DaguInstance {
  seed: DaguSeed;
  /** True when the runner owns the instance (then stop() does nothing). */
  shared: boolean;
}

/** The variables the test runner sets for the test processes. */
export const DAGU_TEST_ENV = [
  'DAGU_TEST_URL',
  'DAGU_TEST_API_BASE',
  'DAGU_TEST_HOME',
  'DAGU_TEST_SEED',
] as const;

/** Environment entries describing a started and seeded instance (what the runner passes on). */
export function testDaguEnv(instance: DaguInstance, seed: DaguSeed): Record<string, string> {
  return {
    DAGU_TEST_URL: instance.url,
    DAGU_TEST_API_BASE: instance.apiBase,
    DAGU_TEST_HOME: instance.home,
    DAGU_TEST_SEED: JSON.stringify(seed),
  };
}

let own: Promise<TestDagu> | undefined;

/**
 * The seeded Dagu for this test process: the runner's shared instance when DAGU_TEST_URL is set,
 * otherwise one started and seeded here (once per process; call `stop()` in an `after` hook).
 */
export function getTestDagu(): Promise<TestDagu> {
  const url = process.env.DAGU_TEST_URL;
  if (url !== undefined && url !== '') {
    const seed = JSON.parse(process.env.DAGU_TEST_SEED ?? 'null') as DaguSeed | null;
    if (seed === null) throw new Error('DAGU_TEST_URL is set but DAGU_TEST_SEED is not');
    return Promise.resolve({
      url,
      apiBase: process.env.DAGU_TEST_API_BASE ?? PIN.apiBase,
      generation: PIN.generation,
      home: process.env.DAGU_TEST_HOME ?? '',
      seed,
      shared: true,
      stop: async () => {},
    });
  }
  own ??= (async () => {
    const instance = await startDagu();
    try {
      const seed = await seedDagu(instance);
      return { ...instance, seed, shared: false };
    } catch (error) {
      await instance.stop();
      throw error;
    }
  })();
  return own;
}
