// Runs node's test runner over test files (Node 20 has no glob support in --test).
//
// When integration (or e2e) tests are included, the runner builds the pinned Dagu, starts and seeds it
// once (test/support/dagu.ts), passes it to the test processes in DAGU_TEST_URL, DAGU_TEST_API_BASE,
// DAGU_TEST_HOME and DAGU_TEST_SEED, and stops it at the end, also on failure and on signals.
// If Dagu cannot be built or started the run fails with the reason: integration tests are never skipped.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

// Arguments are folders or files below test/: `unit`, `integration/mcp/dagu-read.e2e.test.ts`.
const kinds = process.argv.slice(2);
const roots = kinds.length > 0 ? kinds.map((kind) => join('test', kind)) : ['test'];

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = roots.flatMap((root) => (statSync(root).isFile() ? [root] : collect(root, []))).sort();
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ')}`);
  process.exit(1);
}

const NEEDS_DAGU = [join('test', 'integration') + sep, join('test', 'e2e') + sep];
const needsDagu = files.some((file) => NEEDS_DAGU.some((prefix) => file.startsWith(prefix)));

let dagu;
let child;
let stopping;

/** Stops the shared Dagu once; every caller waits for that one stop to finish. */
async function stopDagu() {
  if (stopping === undefined && dagu !== undefined) stopping = dagu.stop();
  if (stopping !== undefined) await stopping;
}

let signalled = false;
async function onSignal(signal) {
  if (signalled) return;
  signalled = true;
  if (child !== undefined && child.exitCode === null) child.kill(signal);
  await stopDagu();
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void onSignal(signal));

const env = { ...process.env };
if (needsDagu) {
  const started = performance.now();
  try {
    const { tsImport } = await import('tsx/esm/api');
    const support = await tsImport('../test/support/dagu.ts', import.meta.url);
    dagu = await support.startDagu();
    const seed = await support.seedDagu(dagu);
    Object.assign(env, support.testDaguEnv(dagu, seed));
    const { module, version } = support.DAGU_PIN;
    const ms = Math.round(performance.now() - started);
    console.log(
      `dagu: ${module}@${version} started and seeded in ${ms} ms at ${dagu.url} (home ${dagu.home})`,
    );
  } catch (error) {
    await stopDagu();
    console.error('\nFAILED: the integration tests need the real Dagu, and it could not be provided.');
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

// The workbook cross-check writes fixtures with Python's openpyxl and msoffcrypto-tool (an independent
// writer). scripts/python-fixtures.sh prepares them once in a cached virtualenv; without Python the
// cross-check tests skip and say why.
const needsPython = files.some((file) => file.includes(`${sep}workbook${sep}`));
if (needsPython && env.WORKBOOK_FIXTURES_PYTHON === undefined) {
  const prepared = spawnSync('bash', [join('scripts', 'python-fixtures.sh')], { encoding: 'utf8', env });
  const python = prepared.stdout.trim().split('\n').at(-1);
  if (prepared.status === 0 && python) env.WORKBOOK_FIXTURES_PYTHON = python;
  else console.warn(`python fixtures unavailable: ${prepared.stderr.trim().split('\n').at(-1) ?? ''}`);
}

const code = await new Promise((resolve) => {
  child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files],
    { stdio: 'inherit', env },
  );
  child.on('error', (error) => {
    console.error(error);
    resolve(1);
  });
  child.on('exit', (status, signal) => resolve(status ?? (signal === null ? 1 : 128)));
});
await stopDagu();
process.exit(code);
