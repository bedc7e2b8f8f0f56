/**
 * The real Dagu for integration tests: builds the pinned release (scripts/build-dagu.sh), starts
 * `dagu start-all` on 127.0.0.1 with a temporary DAGU_HOME, writes real DAG files and runs them
 * through Dagu's REST API.
 *
 * The test runner (scripts/run-tests.mjs) starts and seeds one instance for the whole run and passes
 * it to the test processes in DAGU_TEST_URL, DAGU_TEST_API_BASE, DAGU_TEST_HOME and DAGU_TEST_SEED;
 * `getTestDagu()` returns that instance, or starts and seeds its own when a file runs alone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export type Generation = 1 | 2;

export interface DaguPin {
  module: string;
  version: string;
  package: string;
  apiBase: string;
  generation: Generation;
}

const PIN_FILE = JSON.parse(readFileSync(join(ROOT, 'scripts', 'dagu-version.json'), 'utf8')) as {
  /** The system under test: what the demo starts and build-dagu.sh builds without an argument. */
  defaultGeneration: Generation;
  /** What the whole integration suite runs against by default. */
  testGeneration: Generation;
  generations: Record<string, Omit<DaguPin, 'generation'>>;
};

/** The pinned Dagu of each generation: module, version, REST base (scripts/dagu-version.json). */
export const DAGU_PINS: Readonly<Record<Generation, DaguPin>> = Object.freeze({
  1: Object.freeze({ ...(PIN_FILE.generations['1'] as DaguPin), generation: 1 }),
  2: Object.freeze({ ...(PIN_FILE.generations['2'] as DaguPin), generation: 2 }),
});

/** Reads a generation from a string ('1' or '2'); anything else is an error naming the variable. */
export function parseGeneration(value: string | undefined, variable: string): Generation | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === '1' || value === '2') return Number(value) as Generation;
  throw new Error(`${variable} must be 1 or 2, got ${JSON.stringify(value)}`);
}

/** The generation the demo starts: the system under test (the pin file's defaultGeneration). */
export const DEFAULT_GENERATION: Generation = PIN_FILE.defaultGeneration;

/**
 * The generation tests run against: DAGU_TEST_GENERATION (set by the runner for each test process),
 * else the pin file's testGeneration.
 */
export const TEST_GENERATION: Generation =
  parseGeneration(process.env.DAGU_TEST_GENERATION, 'DAGU_TEST_GENERATION') ?? PIN_FILE.testGeneration;

/** The pin of the generation tests run against. */
export const DAGU_PIN: DaguPin = DAGU_PINS[TEST_GENERATION];

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
  generation: Generation;
  /** The version Dagu reports on its health route (e.g. `v2.15.1`, `1.30.3`). */
  version: string;
  /** DAGU_HOME of the instance (on this machine). */
  home: string;
  /** Bearer token Dagu requires, when started with one. */
  token?: string;
  /** Stops the process this helper started (its whole process group) and removes the home. No-op for a shared instance. */
  stop(): Promise<void>;
}

export interface BuiltinAuth {
  username: string;
  password: string;
  /** DAGU_AUTH_TOKEN_SECRET: signs Dagu's login tokens (HS256). */
  tokenSecret: string;
}

export interface StartDaguOptions {
  /** Which Dagu: default TEST_GENERATION. */
  generation?: Generation;
  /**
   * Require a bearer token on the REST API; the instance's `token` is one Dagu accepts, the credential
   * an operator gives the gateway. 1.x: a static token (DAGU_AUTH_TOKEN). 2.x has no static token:
   * builtin auth (with a generated admin unless `builtinAuth` is given), and the token is a viewer API
   * key of a service account for the REST API. Default: no authentication.
   */
  requireToken?: boolean;
  /** Dagu's builtin user accounts with this first admin and JWT signing secret. */
  builtinAuth?: BuiltinAuth;
  /** Extra environment for Dagu (e.g. `DAGU_TZ`). */
  env?: Record<string, string>;
  /** How long to wait for the health route, default 30 s. */
  readyTimeoutMs?: number;
  /** Receives the build's progress lines while the binary is built (first use only). */
  onBuildProgress?: (line: string) => void;
}

const binaries = new Map<Generation, Promise<string>>();

/**
 * Path of the pinned Dagu binary of a generation, built on first use (scripts/build-dagu.sh: DAGU_BIN,
 * ../shared/dagu, go install, in that order). Rejects with the build's last lines as the reason.
 */
export function daguBinary(
  generation: Generation = TEST_GENERATION,
  onProgress?: (line: string) => void,
): Promise<string> {
  let binary = binaries.get(generation);
  if (binary === undefined) {
    binary = buildBinary(generation, onProgress);
    binary.catch(() => binaries.delete(generation));
    binaries.set(generation, binary);
  }
  return binary;
}

function buildBinary(generation: Generation, onProgress?: (line: string) => void): Promise<string> {
  const pin = DAGU_PINS[generation];
  return new Promise((resolveBinary, reject) => {
    const child = spawn('bash', [join(ROOT, 'scripts', 'build-dagu.sh'), String(generation)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    let stdout = '';
    const stderr: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      onProgress?.(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const binary = stdout.trim().split('\n').at(-1)?.trim();
      if (code === 0 && binary !== undefined && binary !== '') return resolveBinary(binary);
      const reason = stderr.slice(-15).join('\n') || `exit code ${code}`;
      reject(new Error(`cannot get Dagu ${pin.module}@${pin.version} (scripts/build-dagu.sh):\n${reason}`));
    });
  });
}

/** A free TCP port on 127.0.0.1 (the listener is closed before the port is handed out). */
export function freePort(): Promise<number> {
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

/** Dagu's auth settings: none; a static token (1.x); builtin accounts (names differ per generation). */
function authEnv(
  generation: Generation,
  builtin: BuiltinAuth | undefined,
  staticToken: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (builtin === undefined) env.DAGU_AUTH_MODE = 'none';
  else {
    env.DAGU_AUTH_MODE = 'builtin';
    env.DAGU_AUTH_TOKEN_SECRET = builtin.tokenSecret;
    const prefix = generation === 1 ? 'DAGU_AUTH_ADMIN_' : 'DAGU_AUTH_BUILTIN_INITIAL_ADMIN_';
    env[`${prefix}USERNAME`] = builtin.username;
    env[`${prefix}PASSWORD`] = builtin.password;
  }
  if (staticToken !== undefined) env.DAGU_AUTH_TOKEN = staticToken;
  return env;
}

/** Logs in to a builtin-auth Dagu as a user; returns Dagu's login token (a JWT). */
export async function daguLogin(
  instance: Pick<DaguInstance, 'url' | 'apiBase'>,
  credentials: { username: string; password: string },
): Promise<{ token: string; user: { id: string; username: string; role: string } }> {
  const { status, body } = await daguApi(instance, '/auth/login', { method: 'POST', body: credentials });
  if (status !== 200)
    throw new Error(`Dagu login as ${credentials.username} failed: HTTP ${status} ${JSON.stringify(body)}`);
  return body as { token: string; user: { id: string; username: string; role: string } };
}

/** Creates a 2.x API key for the gateway: a viewer service account on the REST API, every workspace. */
async function createServiceApiKey(instance: DaguInstance, admin: BuiltinAuth): Promise<string> {
  const { token } = await daguLogin(instance, admin);
  const { status, body } = await daguApi({ ...instance, token }, '/api-keys', {
    method: 'POST',
    body: {
      name: 'dagu-mcp-gateway',
      role: 'viewer',
      allowedSurfaces: ['rest_api'],
      attributionClass: 'service_account',
      serviceAccountName: 'dagu-mcp-gateway',
      workspaceAccess: { all: true, grants: [] },
    },
  });
  const key = (body as { key?: unknown } | undefined)?.key;
  if (status !== 201 || typeof key !== 'string') {
    throw new Error(`creating a Dagu API key failed: HTTP ${status} ${JSON.stringify(body)}`);
  }
  return key;
}

/** Starts `dagu start-all` on free loopback ports with a fresh home and waits until it answers. */
export async function startDagu(options: StartDaguOptions = {}): Promise<DaguInstance> {
  const pin = DAGU_PINS[options.generation ?? TEST_GENERATION];
  const binary = await daguBinary(pin.generation, options.onBuildProgress);
  const home = mkdtempSync(join(tmpdir(), 'dagu-test-'));
  mkdirSync(join(home, 'dags'), { recursive: true });
  // Dagu writes example DAGs into an empty DAGs folder on first start; tests want only their own.
  writeFileSync(join(home, 'dags', '.examples-created'), '# no examples in tests\n');
  const port = await freePort();
  // 2.x has no static token: a token-protected 2.x is a builtin-auth 2.x (generated admin if needed).
  const builtin =
    options.builtinAuth ??
    (options.requireToken === true && pin.generation === 2
      ? {
          username: 'admin',
          password: randomBytes(12).toString('hex'),
          tokenSecret: randomBytes(32).toString('hex'),
        }
      : undefined);
  const staticToken =
    options.requireToken === true && pin.generation === 1
      ? `gateway-${randomBytes(16).toString('hex')}`
      : undefined;
  const logPath = join(home, 'dagu.log');
  const logFd = openSync(logPath, 'a');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DAGU_HOME: home,
    DAGU_HOST: '127.0.0.1',
    DAGU_PORT: String(port),
    DAGU_TZ: DAGU_TEST_TZ,
    DAGU_SKIP_EXAMPLES: 'true',
    // 1.x start-all always opens the coordinator's listener (its default port may be taken); 2.x can
    // leave it off, so that instances side by side do not share its gRPC port.
    ...(pin.generation === 1
      ? { DAGU_COORDINATOR_HOST: '127.0.0.1', DAGU_COORDINATOR_PORT: String(await freePort()) }
      : { DAGU_COORDINATOR_ENABLED: 'false' }),
    ...authEnv(pin.generation, builtin, staticToken),
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
    staticToken === undefined ? {} : { authorization: `Bearer ${staticToken}` };
  let version: string;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = tail(logPath);
      await stop();
      throw new Error(
        `Dagu exited during start-up (code ${child.exitCode}, signal ${child.signalCode}):\n${log}`,
      );
    }
    try {
      const response = await fetch(`${url}${pin.apiBase}/health`, {
        headers,
        signal: AbortSignal.timeout(1000),
      });
      if (response.ok) {
        version = String(((await response.json()) as { version?: unknown }).version ?? '');
        break;
      }
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
  if (!version.includes(pin.version.replace(/^v/, ''))) {
    await stop();
    throw new Error(`Dagu at ${url} reports version ${JSON.stringify(version)}, expected ${pin.version}`);
  }
  const instance: DaguInstance = {
    url,
    apiBase: pin.apiBase,
    generation: pin.generation,
    version,
    home,
    stop,
  };
  try {
    if (staticToken !== undefined) instance.token = staticToken;
    else if (options.requireToken === true && builtin !== undefined) {
      instance.token = await createServiceApiKey(instance, builtin);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return instance;
}

// ---- seeding --------------------------------------------------------------------------------

/** DAG names the seed writes on both generations. */
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
  /** Waits at an approval gate (2.x `approval` on a step, 1.x the `hitl` executor). */
  gate: 'approval-gate',
  /** A definition with an error (depends on a missing step); never started. */
  broken: 'broken-spec',
  /** Ran, then its scheduler log file was removed. */
  goneLog: 'gone-log',
  /** Suspended through Dagu's REST API; never started. */
  suspended: 'suspended',
});

/** DAG names the seed writes on Dagu 2.x only (features 1.x does not have). */
export const SEED_DAGS_2X = Object.freeze({
  /** A foreach step over three items with a one-step body. */
  foreach: 'foreach-items',
  /** Waits at a human task (`action: human.task`) with a form. */
  humanTask: 'human-task',
});

/** A Wiki page the seed creates (2.x). `path` is the page id within its workspace. */
export interface SeedWikiPage {
  workspace: string;
  path: string;
  title: string;
  description: string;
  tags: string[];
  content: string;
}

/** What the seed adds on Dagu 2.x: runs of 2.x-only DAGs and the Wiki. */
export interface DaguSeed2x {
  runs: { foreach: string; humanTask: string };
  foreach: { stepName: string; items: string[]; bodyStepName: string };
  humanTask: { stepName: string; stepId: string; prompt: string };
  wiki: {
    /** Workspaces created besides `default`. */
    workspaces: string[];
    pages: SeedWikiPage[];
    /** A word every page contains once, and one only the `ops` pages contain. */
    commonWord: string;
    opsWord: string;
  };
}

export interface DaguSeed {
  generation: Generation;
  /** Every seeded DAG: SEED_DAGS, plus SEED_DAGS_2X on 2.x. */
  dags: typeof SEED_DAGS & Partial<typeof SEED_DAGS_2X>;
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
  /** Present on Dagu 2.x only. */
  v2?: DaguSeed2x;
  /** Number of DAG files written. */
  dagCount: number;
}

const GATE = { prompt: 'Ship the release?', input: ['reason', 'ticket'], required: ['reason'] };
const FOREACH = { stepName: 'each region', items: ['eu', 'us', 'ap'], bodyStepName: 'deploy region' };
const HUMAN_TASK = { stepName: 'sign off', stepId: 'signoff', prompt: 'Confirm the audit is complete' };

function dagFiles(generation: Generation): Record<string, string> {
  const labelsKey = generation === 1 ? 'tags' : 'labels';
  // 2.x: the step runs its command, then waits for approval; 1.x: the hitl executor waits.
  const gateStep =
    generation === 1
      ? `    executor:
      type: hitl
      config:
        prompt: ${GATE.prompt}
        input: [${GATE.input.join(', ')}]
        required: [${GATE.required.join(', ')}]`
      : `    command: echo "release candidate built"
    approval:
      prompt: ${GATE.prompt}
      input: [${GATE.input.join(', ')}]
      required: [${GATE.required.join(', ')}]`;
  const files: Record<string, string> = {
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
${gateStep}
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
    [SEED_DAGS.suspended]: `description: Suspended by the seed
steps:
  - name: idle
    command: "true"
`,
  };
  if (generation === 2) {
    files[SEED_DAGS_2X.foreach] = `steps:
  - name: ${FOREACH.stepName}
    foreach:
      items: [${FOREACH.items.join(', ')}]
      as: region
      steps:
        - name: ${FOREACH.bodyStepName}
          command: echo "deploying \${foreach.region}"
  - name: summary
    command: echo done
    depends: [${FOREACH.stepName}]
`;
    files[SEED_DAGS_2X.humanTask] = `steps:
  - name: gather
    command: echo "audit gathered"
  - name: ${HUMAN_TASK.stepName}
    id: ${HUMAN_TASK.stepId}
    action: human.task
    with:
      prompt: ${HUMAN_TASK.prompt}
      form:
        type: object
        properties:
          auditor:
            type: string
        required: [auditor]
    depends: [gather]
`;
  }
  return files;
}

/** The Wiki the seed writes on 2.x: pages in `default` and two more workspaces, some nested. */
const WIKI_WORKSPACES = ['ops', 'data'];
const COMMON_WORD = 'gatewayseed';
const OPS_WORD = 'pagerrota';

function wikiPage(
  workspace: string,
  path: string,
  title: string,
  tags: string[],
  body: string,
): SeedWikiPage {
  const content = `---\ntitle: ${title}\ndescription: ${body}\ntags: [${tags.join(', ')}]\n---\n# ${title}\n\n${body}\n\nSeeded for tests (${COMMON_WORD}).\n`;
  return { workspace, path, title, description: body, tags, content };
}

const WIKI_PAGES: SeedWikiPage[] = [
  wikiPage(
    'default',
    'getting-started',
    'Getting started',
    ['intro'],
    'How to read runs through the gateway.',
  ),
  wikiPage(
    'default',
    'guides/deploy',
    'Deploy guide',
    ['deploy', 'guide'],
    'Run two-steps before a release.',
  ),
  wikiPage('default', 'guides/advanced/rollback', 'Rollback', ['deploy'], 'Roll back with the parent DAG.'),
  wikiPage(
    'ops',
    'runbooks/restart',
    'Restart runbook',
    ['ops'],
    `Who is on the ${OPS_WORD}, and how to restart.`,
  ),
  wikiPage('ops', 'on-call', 'On call', ['ops'], `The ${OPS_WORD} for this week.`),
  wikiPage('data', 'schemas/events/v1', 'Event schema v1', ['schema'], 'Fields of the event table.'),
];

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

export async function startRun(instance: DaguInstance, name: string): Promise<string> {
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
export async function waitForRun(
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

/** Calls Dagu and fails the seed unless it answers one of `ok`. */
async function seedCall(
  instance: DaguInstance,
  what: string,
  path: string,
  init: { method?: string; body?: unknown },
  ok: readonly number[] = [200, 201],
): Promise<unknown> {
  const { status, body } = await daguApi(instance, path, init);
  if (!ok.includes(status)) throw new Error(`seed: ${what} failed: HTTP ${status} ${JSON.stringify(body)}`);
  return body;
}

/** Creates the workspaces and Wiki pages of the 2.x seed. */
async function seedWiki(instance: DaguInstance): Promise<void> {
  for (const name of WIKI_WORKSPACES) {
    await seedCall(instance, `creating workspace ${name}`, '/workspaces', { method: 'POST', body: { name } });
  }
  for (const page of WIKI_PAGES) {
    await seedCall(
      instance,
      `creating Wiki page ${page.workspace}/${page.path}`,
      `/wiki?workspace=${encodeURIComponent(page.workspace)}`,
      { method: 'POST', body: { id: page.path, content: page.content } },
    );
  }
}

/**
 * Writes the seed DAGs into the instance's `dags` folder, runs them through the REST API and waits for
 * their end (the approval gate and the human task: until they wait), suspends one DAG and, on 2.x,
 * writes the Wiki. Returns the run ids and the facts tests assert on.
 */
export async function seedDagu(instance: DaguInstance): Promise<DaguSeed> {
  const { generation } = instance;
  const files = dagFiles(generation);
  const dagsDir = join(instance.home, 'dags');
  mkdirSync(dagsDir, { recursive: true });
  for (const [name, spec] of Object.entries(files)) writeFileSync(join(dagsDir, `${name}.yaml`), spec);

  // The first run of two-steps ends before the second starts, so "latest" and the order are certain.
  const twoStepsFirst = await startRun(instance, SEED_DAGS.twoSteps);
  await Promise.all([
    // Dagu stores start times in whole seconds: the second run starts in a later second, so "newest
    // first" is never a tie.
    waitForRun(instance, SEED_DAGS.twoSteps, twoStepsFirst).then(() => sleep(1010 - (Date.now() % 1000))),
    generation === 2 ? seedWiki(instance) : undefined,
    seedCall(instance, 'suspending a DAG', `/dags/${SEED_DAGS.suspended}/suspend`, {
      method: 'POST',
      body: { suspend: true },
    }),
  ]);

  const waiting = new Set<string>([SEED_DAGS.gate, SEED_DAGS_2X.humanTask]);
  const names: string[] = [
    SEED_DAGS.twoSteps,
    SEED_DAGS.fails,
    SEED_DAGS.parent,
    SEED_DAGS.dotted,
    SEED_DAGS.labelled,
    SEED_DAGS.manyLines,
    SEED_DAGS.gate,
    SEED_DAGS.goneLog,
    ...(generation === 2 ? [SEED_DAGS_2X.foreach, SEED_DAGS_2X.humanTask] : []),
  ];
  const ids = await Promise.all(names.map((name) => startRun(instance, name)));
  const idOf = (name: string) => ids[names.indexOf(name)] as string;
  const details = await Promise.all(
    names.map((name, i) =>
      waitForRun(instance, name, ids[i] as string, waiting.has(name) ? new Set([7]) : undefined),
    ),
  );
  const detailsOf = (name: string) => details[names.indexOf(name)] as Json;
  const parentNode = (detailsOf(SEED_DAGS.parent).nodes as Json[])[0] as Json;
  const childSub = ((parentNode.subRuns as Json[])[0] as Json).dagRunId as string;

  unlinkSync(detailsOf(SEED_DAGS.goneLog).log as string);

  const seed: DaguSeed = {
    generation,
    dags: generation === 2 ? { ...SEED_DAGS, ...SEED_DAGS_2X } : { ...SEED_DAGS },
    runs: {
      twoStepsFirst,
      twoStepsSecond: idOf(SEED_DAGS.twoSteps),
      fails: idOf(SEED_DAGS.fails),
      parent: idOf(SEED_DAGS.parent),
      childSub,
      dotted: idOf(SEED_DAGS.dotted),
      labelled: idOf(SEED_DAGS.labelled),
      manyLines: idOf(SEED_DAGS.manyLines),
      gate: idOf(SEED_DAGS.gate),
      goneLog: idOf(SEED_DAGS.goneLog),
    },
    facts: {
      twoStepsStepNames: ['step one', 'step two'],
      failsStepName: 'boom',
      failsStderr: 'disk quota exceeded',
      failsExitCode: 3,
      manyLinesCount: 3000,
      labels: { dotted: ['alpha'], labelled: ['alpha', 'beta'] },
      gatePrompt: GATE.prompt,
      gateInput: GATE.input,
      gateRequired: GATE.required,
    },
    dagCount: Object.keys(files).length,
  };
  if (generation === 2) {
    seed.v2 = {
      runs: { foreach: idOf(SEED_DAGS_2X.foreach), humanTask: idOf(SEED_DAGS_2X.humanTask) },
      foreach: { ...FOREACH },
      humanTask: { ...HUMAN_TASK },
      wiki: { workspaces: WIKI_WORKSPACES, pages: WIKI_PAGES, commonWord: COMMON_WORD, opsWord: OPS_WORD },
    };
  }
  return seed;
}

// ---- the shared instance --------------------------------------------------------------------

export interface TestDagu extends DaguInstance {
  seed: DaguSeed;
  /** True when the runner owns the instance (then stop() does nothing). */
  shared: boolean;
}

/** The variables the test runner sets for the test processes. */
export const DAGU_TEST_ENV = [
  'DAGU_TEST_GENERATION',
  'DAGU_TEST_URL',
  'DAGU_TEST_API_BASE',
  'DAGU_TEST_VERSION',
  'DAGU_TEST_HOME',
  'DAGU_TEST_SEED',
] as const;

/** Environment entries describing a started and seeded instance (what the runner passes on). */
export function testDaguEnv(instance: DaguInstance, seed: DaguSeed): Record<string, string> {
  return {
    DAGU_TEST_GENERATION: String(instance.generation),
    DAGU_TEST_URL: instance.url,
    DAGU_TEST_API_BASE: instance.apiBase,
    DAGU_TEST_VERSION: instance.version,
    DAGU_TEST_HOME: instance.home,
    DAGU_TEST_SEED: JSON.stringify(seed),
  };
}

let own: Promise<TestDagu> | undefined;

/**
 * The seeded Dagu for this test process: the runner's shared instance when DAGU_TEST_URL is set,
 * otherwise one of TEST_GENERATION started and seeded here (once per process; call `stop()` in an
 * `after` hook).
 */
export function getTestDagu(): Promise<TestDagu> {
  const url = process.env.DAGU_TEST_URL;
  if (url !== undefined && url !== '') {
    const seed = JSON.parse(process.env.DAGU_TEST_SEED ?? 'null') as DaguSeed | null;
    if (seed === null) throw new Error('DAGU_TEST_URL is set but DAGU_TEST_SEED is not');
    return Promise.resolve({
      url,
      apiBase: process.env.DAGU_TEST_API_BASE ?? DAGU_PIN.apiBase,
      generation: seed.generation,
      version: process.env.DAGU_TEST_VERSION ?? DAGU_PIN.version,
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
