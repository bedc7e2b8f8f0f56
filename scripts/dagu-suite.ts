// Dagu's own MCP conformance tests against Dagu and against the gateway (`npm run test:dagu-suite`).
//
// Dagu v2.15.1 ships Go conformance tests for its MCP server and its read tool
// (conformance/spec020_mcp_server, conformance/spec021_mcp_read_tool). They start Dagu's in-process
// test server and connect the Go MCP SDK client to the URL one helper method of conformance/mcptest
// returns. This script:
//
//  1. gets the unmodified Dagu source and its stubs from ../shared/dagu/build.sh (the same tree and
//     cache the Dagu binary comes from; nothing in that tree is changed);
//  2. builds the two test binaries with `go test -c -overlay`: the overlay adds this project's own
//     test/dagu-suite/redirect.go to the helper package and, in a copy written to the cache, renames
//     the helper's endpoint method so that redirect.go's takes its place. Nothing of Dagu is kept in
//     this repository. The binaries are cached under ~/.cache/dagu-mcp-gateway/dagu-suite-<hash>,
//     keyed by the source archive, build.sh, redirect.go, this script's build recipe and Go;
//  3. runs each package twice with `go tool test2json` (the events of `go test -json`): against
//     Dagu's own /mcp, then with DAGU_SUITE_CONTROL set, where redirect.go asks this script's control
//     endpoint for a gateway per test server: the gateway (src/app.ts, in this process) is started in
//     front of that server's REST API and its /mcp URL handed back;
//  4. compares per leaf case with test/dagu-suite/baseline.yml: Dagu must pass every case, the
//     gateway every case not listed, and a listed case that passes on the gateway fails the run.
//
// Without ../shared/dagu or Go, the run is skipped with the reason; under CI (scripts/ci.mjs) that, and
// any build failure, fails it.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningGateway, startGateway } from '../test/support/gateway.ts';
import { isCI } from './ci.mjs';
import {
  type BaselineEntry,
  compare,
  counts,
  missingClauses,
  type Outcome,
  type PackageRun,
  parseBaseline,
  parseTestEvents,
} from './dagu-suite-compare.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = join(ROOT, '..', 'shared');
const BUILD_SH = join(SHARED, 'dagu', 'build.sh');
const SPEC = join(SHARED, 'spec', '021-mcp-read-tool.md');
const REDIRECT = join(ROOT, 'test', 'dagu-suite', 'redirect.go');
const BASELINE = join(ROOT, 'test', 'dagu-suite', 'baseline.yml');
const PACKAGES = ['spec020_mcp_server', 'spec021_mcp_read_tool'] as const;
const HELPER = 'conformance/mcptest/mcptest.go';
/** The one line of the helper the overlay copy changes: its endpoint method gets another name. */
const ENDPOINT_METHOD = 'func (s *Server) endpoint() string {';
const RENAMED_METHOD = 'func (s *Server) daguEndpoint() string {';
/** Bump when the build below changes in a way the other key parts do not show. */
const RECIPE = 'dagu-suite build 1: go test -c -trimpath -overlay';
const started = Date.now();
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function skipOrFail(reason: string): never {
  if (isCI()) {
    console.error(`dagu-suite: ${reason} (under CI this fails the run)`);
    process.exit(1);
  }
  console.log(`dagu-suite: skipped: ${reason}`);
  process.exit(0);
}

function fail(message: string): never {
  console.error(`dagu-suite: ${message}`);
  process.exit(1);
}

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

function findGo(): string | undefined {
  if (process.env.GO) return existsSync(process.env.GO) ? process.env.GO : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'go'))) return join(dir, 'go');
  }
  return ['/usr/local/go/bin/go', '/usr/lib/go/bin/go', join(homedir(), 'go', 'bin', 'go')].find(existsSync);
}

/**
 * Runs a command; resolves with its stdout, rejects with its exit status and stderr's tail (with
 * `anyExit`, resolves with stdout whatever the exit status).
 */
function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; echo?: boolean; anyExit?: boolean } = {},
): Promise<string> {
  return new Promise((done, failed) => {
    const child: ChildProcess = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      err.push(chunk);
      if (options.echo) process.stderr.write(chunk);
    });
    child.on('error', failed);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8');
      if (code === 0 || options.anyExit) done(stdout);
      else {
        const tail = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-15).join('\n');
        failed(new Error(`${command} ${args.join(' ')} exited with ${code}\n${tail}`));
      }
    });
  });
}

/** `a < b` for dotted versions (`1.26.8`, `1.27.0`). */
function older(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

// ---------------------------------------------------------------- 1. source and Go
if (!existsSync(BUILD_SH))
  skipOrFail(`${BUILD_SH} is missing (the Dagu source archive and its build script)`);
const go = findGo();
if (go === undefined) skipOrFail('no Go toolchain found (set GO=/path/to/go)');
const goDir = dirname(go);
const baseEnv: NodeJS.ProcessEnv = {
  ...process.env,
  GO: go,
  PATH: `${goDir}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
};
const cacheRoot =
  process.env.DAGU_CACHE_DIR ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'dagu-mcp-gateway');
const pin = JSON.parse(readFileSync(join(ROOT, 'scripts', 'dagu-version.json'), 'utf8')) as {
  generations: Record<string, { version: string }>;
};
const daguVersion = pin.generations['2']?.version ?? 'v2';

const buildStarted = Date.now();
let daguBin: string;
try {
  // Same cache folder as scripts/build-dagu.sh gives build.sh.
  const args = [
    BUILD_SH,
    ...(process.env.DAGU_CACHE_DIR ? [join(cacheRoot, `dagu-${daguVersion}-build`)] : []),
  ];
  const out = await run('bash', args, { env: baseEnv, echo: true });
  daguBin = out.trim().split('\n').at(-1) ?? '';
} catch (error) {
  fail(`building Dagu failed: ${(error as Error).message}`);
}
const src = join(dirname(daguBin), 'src');
if (!existsSync(join(src, HELPER)))
  fail(`${src} holds no ${HELPER}: build.sh keeps its source elsewhere now`);

const goMod = readFileSync(join(src, 'go.mod'), 'utf8');
const need = /^go (\S+)$/m.exec(goMod)?.[1] ?? '0';
const have = (await run(go, ['env', 'GOVERSION'], { env: { ...baseEnv, GOTOOLCHAIN: 'local' } }))
  .trim()
  .replace(/^go/, '');
const goEnv: NodeJS.ProcessEnv = { ...baseEnv };
if ((!goEnv.GOTOOLCHAIN || goEnv.GOTOOLCHAIN === 'local') && older(have, need)) {
  // As build.sh does: the toolchain it builds Dagu with, fetched by the go command from the proxy.
  goEnv.GOTOOLCHAIN = `go${older(need, '1.27.3') ? '1.27.3' : need}`;
}

// ---------------------------------------------------------------- 2. test binaries (cached)
const helper = readFileSync(join(src, HELPER), 'utf8');
if (helper.split(ENDPOINT_METHOD).length !== 2)
  fail(`${HELPER} no longer has exactly one "${ENDPOINT_METHOD}": update scripts/dagu-suite.ts`);
const redirect = readFileSync(REDIRECT, 'utf8');
const key = sha(
  [
    RECIPE,
    src,
    sha(readFileSync(archivePath(join(SHARED, 'dagu')))),
    sha(readFileSync(BUILD_SH)),
    sha(goMod),
    sha(helper),
    sha(redirect),
    goEnv.GOTOOLCHAIN ?? have,
  ].join('\n'),
).slice(0, 16);
const suiteDir = join(cacheRoot, `dagu-suite-${key}`);
const binary = (pkg: string) => join(suiteDir, 'bin', `${pkg}.test`);
// Dagu's test helper finds the repository root from its own source path: with -trimpath that is
// `github.com/dagucloud/dagu/v2`, relative to the working folder. There, under CI=true, it takes the
// prebuilt .local/bin/dagu (for the DAG runs' subprocesses) instead of compiling one per run.
const runDir = join(suiteDir, 'run');
const cached = PACKAGES.every((pkg) => existsSync(binary(pkg))) && existsSync(join(suiteDir, '.complete'));
let buildNote = 'cached';
if (!cached) {
  console.error(`dagu-suite: building Dagu's conformance test binaries into ${suiteDir}`);
  const work = mkdtempSync(join(cacheRoot, `.dagu-suite-${key}-`));
  try {
    const overlayDir = join(work, 'overlay');
    mkdirSync(overlayDir, { recursive: true });
    writeFileSync(join(overlayDir, 'mcptest.go'), helper.replace(ENDPOINT_METHOD, RENAMED_METHOD));
    writeFileSync(join(overlayDir, 'dagu_suite_redirect.go'), redirect);
    const overlay = {
      Replace: {
        [join(src, HELPER)]: join(overlayDir, 'mcptest.go'),
        [join(src, 'conformance', 'mcptest', 'dagu_suite_redirect.go')]: join(
          overlayDir,
          'dagu_suite_redirect.go',
        ),
      },
    };
    writeFileSync(join(work, 'overlay.json'), JSON.stringify(overlay, null, 2));
    mkdirSync(join(work, 'bin'));
    const targets = PACKAGES.map((pkg) => `./conformance/${pkg}`);
    const flags = ['-c', '-trimpath', '-overlay', join(work, 'overlay.json'), '-o', `${join(work, 'bin')}/`];
    await run(go, ['test', ...flags, ...targets], { cwd: src, env: goEnv, echo: true });
    rmSync(suiteDir, { recursive: true, force: true });
    renameSync(work, suiteDir);
    // The overlay names files by absolute path; rewrite it for the folder it now lives in (kept for
    // whoever wants to rebuild by hand; the binaries do not need it).
    writeFileSync(
      join(suiteDir, 'overlay.json'),
      JSON.stringify(overlay, null, 2).replaceAll(work, suiteDir),
    );
    writeFileSync(join(suiteDir, '.complete'), `${key}\n`);
    buildNote = `built in ${seconds(buildStarted)}`;
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    fail(`building the conformance test binaries failed: ${(error as Error).message}`);
  }
}
const localBin = join(runDir, 'github.com', 'dagucloud', 'dagu', 'v2', '.local', 'bin');
mkdirSync(localBin, { recursive: true });
rmSync(join(localBin, 'dagu'), { force: true });
symlinkSync(daguBin, join(localBin, 'dagu'));
console.log(
  `dagu-suite: Dagu ${daguVersion} and its conformance test binaries ready (${buildNote}, ${seconds(buildStarted)})`,
);

function archivePath(dir: string): string {
  const archive = join(dir, `dagu-${daguVersion}-src.tar.gz`);
  if (!existsSync(archive)) fail(`${archive} is missing`);
  return archive;
}

// ---------------------------------------------------------------- 3. the gateway per test server
const scratch = mkdtempSync(join(tmpdir(), 'dagu-suite-'));
// A key file whose one key nobody holds: the gateway's own credentials, for Dagu test servers that
// turn authentication on. Keys kept in Dagu's store are not the gateway's (docs/dagu-differences.md).
const keysFile = join(scratch, 'keys', 'keys.yaml');
mkdirSync(dirname(keysFile));
writeFileSync(
  keysFile,
  `keys:\n  - name: dagu-suite\n    sha256: ${sha(randomBytes(32).toString('hex'))}\n    surfaces: [mcp]\n    role: viewer\n`,
);
let gateways: RunningGateway[] = [];
let gatewayCount = 0;

async function gatewayFor(daguMcp: string): Promise<string> {
  const url = new URL(daguMcp);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) || url.protocol !== 'http:')
    throw new Error(`not a loopback Dagu: ${daguMcp}`);
  const base = url.origin;
  // Dagu's auth server answers its REST API with 401 until a credential comes along.
  const probe = await fetch(`${base}/api/v1/dags?perPage=1`, { signal: AbortSignal.timeout(10_000) });
  const auth: Record<string, string> = probe.status === 401 ? { AUTH_API_KEYS_FILE: keysFile } : {};
  gatewayCount += 1;
  const gateway = await startGateway({
    DAGU_URL: base,
    DAGU_API_BASE: '/api/v1',
    DAGU_PROBE_INTERVAL_MS: '0',
    // Dagu's tests make many calls from one address in a few seconds; the rate limit is not what
    // they test, and the per-identity concurrency limit stays at its default.
    RATE_LIMIT_PER_MINUTE: '100000',
    AUDIT_LOG: join(scratch, `audit-${gatewayCount}.log`),
    ...auth,
  });
  gateways.push(gateway);
  return gateway.mcpUrl;
}

function control(request: IncomingMessage, reply: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    gatewayFor(Buffer.concat(chunks).toString('utf8').trim()).then(
      (mcpUrl) => reply.writeHead(200, { 'content-type': 'text/plain' }).end(mcpUrl),
      (error: unknown) => reply.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
    );
  });
}

const controlServer = createServer(control);
await new Promise<void>((done) => controlServer.listen(0, '127.0.0.1', done));
const controlAddress = controlServer.address();
const controlUrl = `http://127.0.0.1:${typeof controlAddress === 'object' && controlAddress ? controlAddress.port : 0}/`;

async function closeGateways(): Promise<void> {
  const open = gateways;
  gateways = [];
  await Promise.all(open.map((gateway) => gateway.app.close()));
}

// ---------------------------------------------------------------- 4. run and compare
async function runPackage(pkg: string, side: 'dagu' | 'gateway'): Promise<PackageRun> {
  const env: NodeJS.ProcessEnv = { ...goEnv, CI: 'true' };
  if (side === 'gateway') env.DAGU_SUITE_CONTROL = controlUrl;
  else delete env.DAGU_SUITE_CONTROL;
  const args = ['tool', 'test2json', '-t', '-p', pkg, binary(pkg), '-test.v=test2json', '-test.timeout=10m'];
  // A failing test exits non-zero; the events are what count.
  return parseTestEvents(await run(go as string, args, { cwd: runDir, env, anyExit: true }));
}

const outcomes = { dagu: new Map<string, Outcome>(), gateway: new Map<string, Outcome>() };
const output = new Map<string, string[]>();
const runStarted = Date.now();
try {
  for (const pkg of PACKAGES) {
    for (const side of ['dagu', 'gateway'] as const) {
      const result = await runPackage(pkg, side);
      await closeGateways();
      if (result.outcomes.size === 0) fail(`${pkg} on ${side}: no test events (did the binary start?)`);
      for (const [name, outcome] of result.outcomes) outcomes[side].set(`${pkg}/${name}`, outcome);
      if (side === 'gateway') for (const [name, lines] of result.output) output.set(`${pkg}/${name}`, lines);
    }
  }
} finally {
  await closeGateways();
  controlServer.close();
  rmSync(scratch, { recursive: true, force: true });
}

let baseline: BaselineEntry[];
try {
  baseline = parseBaseline(readFileSync(BASELINE, 'utf8'));
} catch (error) {
  fail((error as Error).message);
}
const problems: string[] = [];
if (existsSync(SPEC)) problems.push(...missingClauses(baseline, readFileSync(SPEC, 'utf8')));
else if (isCI()) problems.push(`${SPEC} is missing: the baseline's clauses cannot be checked`);
const comparison = compare(outcomes.dagu, outcomes.gateway, baseline);
problems.push(...comparison.problems);

const line = (label: string, side: Map<string, Outcome>) => {
  const c = counts(side);
  return `  ${label}: ${c.testsPassed}/${c.tests} tests, ${c.leavesPassed}/${c.leaves} leaf cases pass`;
};
console.log(`dagu-suite: Dagu's conformance/{${PACKAGES.join(',')}} (${gatewayCount} gateways started)`);
console.log(line("Dagu's /mcp", outcomes.dagu));
console.log(line('the gateway', outcomes.gateway));
console.log(
  `  ${comparison.accepted.length} baselined differences still differ (test/dagu-suite/baseline.yml)`,
);
console.log(`  runs ${seconds(runStarted)}, total ${seconds(started)}`);
if (problems.length > 0) {
  for (const problem of problems) {
    console.error(`dagu-suite: ${problem}`);
    const name = /^gateway: (\S+) /.exec(problem)?.[1];
    const lines = name === undefined ? [] : (output.get(name) ?? []);
    // The test's own failure report (`file_test.go:NN:` and its indented lines), not Dagu's logs.
    const start = lines.findIndex((text) => /^\s+\S+\.go:\d+: /.test(text));
    const detail =
      start < 0
        ? []
        : lines
            .slice(start)
            .filter((text) => /^\s/.test(text))
            .slice(0, 12);
    for (const text of detail) process.stderr.write(`      ${text}`);
  }
  process.exit(1);
}
console.log('dagu-suite: ok');
