// Runs node's test runner over test files (Node 20 has no glob support in --test).
//
//   node scripts/run-tests.mjs [unit|integration|integration/mcp|FILE.test.ts ...]   default: every test
//
// Unit tests run without Dagu. Integration, e2e and fuzz tests run against a real Dagu of the selected
// generation (DAGU_TEST_GENERATION=1|2, default: the pin file's testGeneration), built, started and
// seeded once by test/support/dagu.ts and passed to the test processes in DAGU_TEST_* variables. When
// the whole integration folder runs, a subset (SECOND_GENERATION) also runs against the other
// generation's real Dagu, so neither REST dialect rots; DAGU_TEST_SECOND=0 leaves that out. Files
// listed in ONLY_ON run once, against the generation they need. Every Dagu is
// stopped at the end, also on failure and on signals. If a Dagu cannot be provided the run fails with
// the reason: integration tests are never skipped. At the end the runner prints test counts per Dagu.
//
// Under CI (isCI(), scripts/ci.mjs: CI=true or 1; .ci/run sets it) a missing tool fails the run (the
// Pythons of the workbook cross-checks and of the OAuth end-to-end test included).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { isCI } from './ci.mjs';

const ci = isCI();
const args = process.argv.slice(2);

/** Which integration files also run against the other generation's Dagu (paths with `/`). */
const SECOND_GENERATION = {
  // Dagu 1.30.3 beside a 2.x suite: the DAG, run and log targets, and the MCP read path.
  1: (file) =>
    [
      'test/integration/dagu/dags.test.ts',
      'test/integration/dagu/runs.test.ts',
      'test/integration/dagu/step-log.test.ts',
      'test/integration/mcp/dagu-read.e2e.test.ts',
    ].includes(file),
  // Dagu 2.x beside a 1.x suite (DAGU_TEST_GENERATION=1): everything.
  2: () => true,
};

/** Files that need one generation (they compare with what only it has): they run once, against it. */
const ONLY_ON = {
  // Compares the gateway with Dagu 2.x's own /mcp.
  'test/integration/mcp/dagu-differential.e2e.test.ts': 2,
  // Starts a Dagu 2.x of its own to retry runs in (the cache it tests is a 2.x feature).
  'test/integration/read/upstream/finished-logs.e2e.test.ts': 2,
  // The compose stack's init step runs against the Dagu 2.x the stack ships.
  'test/integration/deploy/compose-init.test.ts': 2,
};
const onlyOn = (file) => ONLY_ON[file.split(sep).join('/')];

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

// Arguments are folders or files below test/ (`unit`, `integration/mcp/dagu-read.e2e.test.ts`), or
// test files from the project folder (`test/integration/dagu/runs.test.ts`).
const roots = args.map((arg) => (arg.endsWith('.test.ts') && existsSync(arg) ? arg : join('test', arg)));
if (args.length === 0) roots.push('test');
const files = [
  ...new Set(roots.flatMap((root) => (statSync(root).isFile() ? [root] : collect(root, [])))),
].sort();
if (files.length === 0) {
  console.error(`no test files under ${args.join(', ') || 'test'}`);
  process.exit(1);
}

const NEEDS_DAGU = [join('test', 'integration') + sep, join('test', 'e2e') + sep, join('test', 'fuzz') + sep];
const needsDagu = (file) => NEEDS_DAGU.some((prefix) => file.startsWith(prefix));
const withoutDagu = files.filter((file) => !needsDagu(file));
const withDagu = files.filter(needsDagu);
const wholeIntegration = roots.some((root) => root === 'test' || root === join('test', 'integration'));

const { tsImport } = await import('tsx/esm/api');
const support = withDagu.length > 0 ? await tsImport('../test/support/dagu.ts', import.meta.url) : undefined;
const primary = support?.TEST_GENERATION;
const secondary = primary === undefined ? undefined : primary === 1 ? 2 : 1;
const primaryFiles = withDagu.filter((file) => (onlyOn(file) ?? primary) === primary);
const subsetWanted = wholeIntegration && process.env.DAGU_TEST_SECOND !== '0';
const secondFiles =
  secondary === undefined
    ? []
    : withDagu.filter((file) =>
        onlyOn(file) === undefined
          ? subsetWanted && SECOND_GENERATION[secondary](file.split(sep).join('/'))
          : onlyOn(file) === secondary,
      );

/** Per test file (node --test times each file as a test of its run), and so per test and hook. */
const TEST_TIMEOUT_MS = 10 * 60_000;
/**
 * A group's runner silent this long is stuck and is killed with its file processes (longer than a file
 * may run, so a slow file is failed by its own timeout first). Node 22.23's runner once spun at full
 * CPU in its parser of a finished file's output (that file's process exited), printing nothing more,
 * deaf to --test-timeout and SIGTERM: one of three CI runs here.
 */
const STALL_MS = TEST_TIMEOUT_MS + 60_000;

const live = new Set();
let child;
let signalled = false;
/** Signals the test process and the file processes it started (its own process group). */
function killGroup(signal) {
  if (child === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
async function stopAll() {
  await Promise.all([...live].map((dagu) => dagu.stop()));
  live.clear();
}
async function onSignal(signal) {
  if (signalled) return;
  signalled = true;
  killGroup(signal);
  await stopAll();
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void onSignal(signal));

const env = { ...process.env };
for (const name of support?.DAGU_TEST_ENV ?? []) delete env[name];

// The workbook cross-check writes fixtures with Python's openpyxl and msoffcrypto-tool (an independent
// writer). scripts/python-fixtures.sh prepares them once in a cached virtualenv. Without them the
// cross-check tests skip and say why; under CI that is a failure.
const needsPython = files.some((file) => file.includes(`${sep}workbook${sep}`));
if (needsPython && env.WORKBOOK_FIXTURES_PYTHON === undefined) {
  const prepared = spawnSync('bash', [join('scripts', 'python-fixtures.sh')], { encoding: 'utf8', env });
  const python = prepared.stdout.trim().split('\n').at(-1);
  if (prepared.status === 0 && python) env.WORKBOOK_FIXTURES_PYTHON = python;
  else {
    const reason = prepared.stderr.trim().split('\n').at(-1) ?? '';
    if (ci) {
      console.error(`FAILED: the workbook cross-checks need Python fixtures (CI): ${reason}`);
      process.exit(1);
    }
    console.warn(`python fixtures unavailable: ${reason}`);
  }
}

// The OAuth end-to-end tests and the real-clients test drive the Python MCP SDK as well (a client this
// project does not write), from a cached virtualenv prepared the same way. Without it that test skips and says why;
// under CI that is a failure.
const needsMcpPython = files.some((file) =>
  ['oauth-provider.e2e.test.ts', 'upstreams.e2e.test.ts', 'real-clients.e2e.test.ts'].some((name) =>
    file.endsWith(`${sep}${name}`),
  ),
);
if (needsMcpPython && env.MCP_CLIENT_PYTHON === undefined) {
  const prepared = spawnSync('bash', [join('scripts', 'python-fixtures.sh'), 'mcp-client'], {
    encoding: 'utf8',
    env,
  });
  const python = prepared.stdout.trim().split('\n').at(-1);
  if (prepared.status === 0 && python) env.MCP_CLIENT_PYTHON = python;
  else {
    const reason = prepared.stderr.trim().split('\n').at(-1) ?? '';
    if (ci) {
      console.error(`FAILED: the OAuth end-to-end test needs the Python MCP SDK (CI=true): ${reason}`);
      process.exit(1);
    }
    console.warn(`Python MCP SDK unavailable: ${reason}`);
  }
}

/** Starts and seeds the real Dagu of a generation; exits the run with the reason if it cannot. */
async function provideDagu(generation) {
  const pin = support.DAGU_PINS[generation];
  const started = performance.now();
  try {
    const dagu = await support.startDagu({
      generation,
      onBuildProgress: (line) => console.error(line),
    });
    live.add(dagu);
    const seed = await support.seedDagu(dagu);
    const ms = Math.round(performance.now() - started);
    console.log(`dagu: ${pin.module}@${pin.version} started and seeded in ${ms} ms at ${dagu.url}`);
    return { dagu, env: support.testDaguEnv(dagu, seed) };
  } catch (error) {
    await stopAll();
    console.error(
      `\nFAILED: the integration tests need the real Dagu ${pin.version}, and it could not be provided.`,
    );
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

const reports = mkdtempSync(join(tmpdir(), 'gateway-tests-'));
const results = [];

/**
 * Runs test files in one `node --test` process; resolves with its exit code and whether it was killed
 * for silence. Its output is passed through, so that silence can be seen.
 */
function runOnce(testFiles, extraEnv, tap) {
  return new Promise((resolve) => {
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        '--test-concurrency=1',
        // A file that hangs (a test, a hook, or a handle left open after its tests) fails after
        // TEST_TIMEOUT_MS and the files after it still run. A hang at a gateway's close once ran a CI
        // past its 90 minutes. (--test-force-exit is not used: on Node 20 it lost the TAP summary.)
        `--test-timeout=${TEST_TIMEOUT_MS}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=tap',
        `--test-reporter-destination=${tap}`,
        ...testFiles,
      ],
      { stdio: ['inherit', 'pipe', 'inherit'], env: { ...env, ...extraEnv }, detached: true },
    );
    let heard = performance.now();
    let stalled = false;
    child.stdout.on('data', (chunk) => {
      heard = performance.now();
      process.stdout.write(chunk);
    });
    const watchdog = setInterval(() => {
      if (performance.now() - heard < STALL_MS) return;
      stalled = true;
      killGroup('SIGKILL');
    }, 10_000);
    child.on('error', (error) => {
      console.error(error);
      resolve({ code: 1, stalled });
    });
    child.on('exit', (status, signal) => {
      clearInterval(watchdog);
      resolve({ code: status ?? (signal === null ? 1 : 128), stalled });
    });
  });
}

/**
 * Runs test files in one `node --test` process, once more if the runner fell silent (a stalled run
 * counts only by its second try); returns its exit code and records the TAP summary counts.
 */
async function runFiles(label, testFiles, extraEnv) {
  let outcome;
  let tap;
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    tap = join(reports, `${results.length}-${attempt}.tap`);
    outcome = await runOnce(testFiles, extraEnv, tap);
    if (!outcome.stalled) break;
    console.error(
      `\n${label}: the test runner printed nothing for ${STALL_MS / 60_000} min and was killed` +
        (attempt === 1 ? '; running the group once more' : ''),
    );
  }
  const { code } = outcome;
  const counts = {};
  try {
    for (const match of readFileSync(tap, 'utf8').matchAll(
      /^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm,
    )) {
      counts[match[1]] = Number(match[2]);
    }
  } catch {
    // No report: the process died before writing one; the exit code says so.
  }
  results.push({ label, files: testFiles.length, code, counts });
  return code;
}

let code = 0;
try {
  // Every group runs even when an earlier one failed, so one run shows every failure.
  if (withoutDagu.length > 0) code = (await runFiles('no Dagu (unit)', withoutDagu, {})) || code;
  if (primaryFiles.length > 0) {
    const first = await provideDagu(primary);
    const label = `Dagu ${support.DAGU_PINS[primary].version} (generation ${primary})`;
    code = (await runFiles(label, primaryFiles, first.env)) || code;
    await first.dagu.stop();
    live.delete(first.dagu);
  }
  if (secondFiles.length > 0) {
    const second = await provideDagu(secondary);
    const label = `Dagu ${support.DAGU_PINS[secondary].version} (generation ${secondary}, subset)`;
    code = (await runFiles(label, secondFiles, second.env)) || code;
  }
} finally {
  await stopAll();
  rmSync(reports, { recursive: true, force: true });
}

console.log('\ntest counts:');
for (const { label, files: count, code: exit, counts } of results) {
  const parts = ['tests', 'pass', 'fail', 'skipped', 'cancelled', 'todo']
    .filter((key) => key === 'tests' || (counts[key] ?? 0) > 0 || key === 'pass' || key === 'fail')
    .map((key) => `${counts[key] ?? 0} ${key}`);
  console.log(`  ${label}: ${parts.join(', ')} (${count} files${exit === 0 ? '' : `, exit ${exit}`})`);
}
// Under CI nothing may skip (skipUnlessCI throws there; this also catches a skip it was not asked about).
const skippedUnderCI = results.filter(({ counts }) => (counts.skipped ?? 0) + (counts.todo ?? 0) > 0);
if (ci && skippedUnderCI.length > 0) {
  console.error(
    `\nFAILED: under CI no test may skip or be a todo: ${skippedUnderCI.map(({ label }) => label).join(', ')}`,
  );
  code ||= 1;
}
process.exit(code);
