// The package as users install and start it: the bin runs the compiled build, `--help` lists every
// setting, flags mirror the environment, `.env` in the working folder is read and the environment wins
// over it, every output line is JSON, and `npm pack` ships only what runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SETTINGS } from '../../src/settings.ts';
import { bearer, postMcp } from '../support/auth-fixtures.ts';
import { BIN, type BinProcess, baseEnv, ensureBuilt, freePort, ROOT, startBin } from '../support/bin.ts';
import { getTestDagu, type TestDagu } from '../support/dagu.ts';
import { connectModern } from '../support/gateway.ts';

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  private?: boolean;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const portOf = (address: string) => Number(new URL(address).port);

let dagu: TestDagu;
const folders: string[] = [];
const running: BinProcess[] = [];
before(async () => {
  ensureBuilt();
  dagu = await getTestDagu();
});
after(async () => {
  await Promise.all(running.map((process) => process.stop()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  await dagu?.stop();
});

function workFolder(dotEnv?: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-bin-'));
  folders.push(folder);
  if (dotEnv !== undefined) writeFileSync(join(folder, '.env'), dotEnv);
  return folder;
}

async function start(options: Parameters<typeof startBin>[0]): Promise<BinProcess> {
  const process = await startBin(options);
  running.push(process);
  return process;
}

const runBin = (args: string[], env = baseEnv()) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd: workFolder(), env, encoding: 'utf8' });

describe('the package', () => {
  test('is publishable, starts the compiled build and needs no TypeScript loader at run time', () => {
    assert.equal(PACKAGE.private, undefined);
    assert.match(BIN, /dist[/\\]main\.js$/);
    // A smaller young generation and a slower-growing old one keep resident memory near 130 MB
    // (bench/RESULTS.md, soak).
    assert.equal(
      PACKAGE.scripts.start,
      'node --max-semi-space-size=8 --heap-growing-percent=50 dist/main.js',
    );
    assert.match(PACKAGE.scripts.prestart ?? '', /npm run build/);
    assert.equal(PACKAGE.dependencies.tsx, undefined, 'tsx is a dev dependency');
    assert.ok(PACKAGE.devDependencies.tsx);
    assert.match(readFileSync(BIN, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  });

  test('npm pack ships only the compiled build (and package.json, README, the LICENSE it names)', () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(packed.status, 0, packed.stderr);
    const [report] = JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }>; size: number }>;
    assert.ok(report);
    const paths = report.files.map((file) => file.path);
    const outside = paths.filter(
      (path) => !path.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE'].includes(path),
    );
    assert.deepEqual(outside, []);
    assert.ok(paths.includes('LICENSE'), 'the license text package.json names (MIT) is shipped');
    assert.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), new RegExp(`^${PACKAGE.license} License`));
    // What npm pack leaves in the clone is never committed by accident.
    const ignored = spawnSync('git', ['check-ignore', '--no-index', 'dagu-mcp-gateway-0.1.0.tgz'], {
      cwd: ROOT,
    });
    assert.equal(ignored.status, 0, 'the packed .tgz is git-ignored');
    for (const needed of ['dist/main.js', 'dist/workbook/worker.js', 'dist/reference/topics/read-tool.md'])
      assert.ok(paths.includes(needed), `${needed} is packed`);
    assert.ok(!paths.some((path) => path.endsWith('.ts')), 'no TypeScript sources');
  });

  test('npm start runs dist/main.js after building it', () => {
    const started = spawnSync('npm', ['start', '--silent', '--', '--version'], {
      cwd: ROOT,
      env: baseEnv(),
      encoding: 'utf8',
    });
    assert.equal(started.status, 0, started.stderr);
    assert.equal(started.stdout.trim().split('\n').at(-1), PACKAGE.version);
  });
});

describe('the command line', () => {
  test('--help lists every setting with its flag, its variable and what it allows', () => {
    const help = runBin(['--help']);
    assert.equal(help.status, 0, help.stderr);
    for (const setting of SETTINGS) {
      const line = help.stdout.split('\n').find((text) => text.trimStart().startsWith(`${setting.flag} `));
      assert.ok(line, `${setting.flag} is listed`);
      assert.ok(line.includes(setting.name), `${setting.flag} names ${setting.name}`);
    }
    for (const flag of ['--stdio', '--help', '--version']) assert.ok(help.stdout.includes(flag), flag);
    assert.ok(help.stdout.includes('.env'));
  });

  test('an unknown flag and an invalid value exit 2 with one line that says what is allowed', () => {
    const unknown = runBin(['--dagu-urll', 'http://x']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--dagu-urll'.*--help/);
    const invalid = runBin(['--port', 'eighty', '--dagu-url', 'ftp://dagu']);
    assert.equal(invalid.status, 2);
    assert.match(invalid.stderr, /PORT: must be a whole number from 0 to 65535 \(got "eighty"\)/);
    assert.match(invalid.stderr, /DAGU_URL: must be an http:\/\/ or https:\/\/ URL/);
    assert.doesNotMatch(invalid.stderr, /pattern|\^|\$"/);
  });
});

describe('keygen through the bin', () => {
  test('makes a key whose printed entry, as a key file, lets that key in and nobody else', async () => {
    const made = runBin(['keygen', '--name', 'bin-made', '--dags', 'fails*']);
    assert.equal(made.status, 0, made.stderr);
    const key = /^\s+(dmg_[A-Za-z0-9_-]+)$/m.exec(made.stdout)?.[1];
    assert.ok(key, made.stdout);
    const entry = made.stdout.slice(
      made.stdout.indexOf('\nkeys:'),
      made.stdout.indexOf('Clients send it as'),
    );
    const folder = workFolder();
    writeFileSync(join(folder, 'keys.yaml'), entry);
    const gateway = await start({
      env: baseEnv({
        PORT: '0',
        AUDIT_LOG: 'audit.log',
        AUTH_API_KEYS_FILE: 'keys.yaml',
        DAGU_URL: dagu.url,
      }),
      cwd: folder,
    });
    assert.equal((await postMcp(gateway.mcpUrl, bearer(key))).status, 200);
    assert.equal((await postMcp(gateway.mcpUrl, bearer(`${key}x`))).status, 401);
    assert.equal((await postMcp(gateway.mcpUrl)).status, 401);
    await gateway.stop();
    assert.equal(runBin(['keygen', '--role', 'root']).status, 2);
  });
});

describe('settings from .env, the environment and flags', () => {
  const daguEnv = () => `DAGU_URL=${dagu.url}\nDAGU_API_BASE=${dagu.apiBase}\n`;

  test('.env in the working folder is read: the gateway listens where it says and reads the Dagu it names', async () => {
    const port = await freePort();
    const folder = workFolder(`PORT=${port}\n${daguEnv()}AUDIT_LOG=audit.log\nTOOL_TEXT=json\n`);
    const gateway = await start({ env: baseEnv(), cwd: folder });
    assert.equal(portOf(gateway.address), port);
    const client = await connectModern(gateway.mcpUrl);
    try {
      const result = await client.callTool({ target: 'run', name: dagu.seed.dags.fails, dagRunId: 'latest' });
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.equal(result.structuredContent?.target, 'run');
      // TOOL_TEXT=json came from .env too.
      assert.match(String(result.content[0]?.text), /^Dagu read completed\.\n\n\{/);
    } finally {
      await client.close();
    }
    // AUDIT_LOG from .env, relative to the working folder.
    assert.match(readFileSync(join(folder, 'audit.log'), 'utf8'), /"event":"mcp.tool_call"/);
    await gateway.stop();
  });

  test('the environment wins over .env, and a flag wins over the environment', async () => {
    const [inFile, inEnv, inFlag] = [await freePort(), await freePort(), await freePort()];
    const folder = workFolder(`PORT=${inFile}\n${daguEnv()}`);
    const fromEnv = await start({
      env: baseEnv({ PORT: String(inEnv), AUDIT_LOG: 'audit.log' }),
      cwd: folder,
    });
    assert.equal(portOf(fromEnv.address), inEnv);
    await fromEnv.stop();
    const fromFlag = await start({
      env: baseEnv({ PORT: String(inEnv), AUDIT_LOG: 'audit.log' }),
      args: ['--port', String(inFlag)],
      cwd: folder,
    });
    assert.equal(portOf(fromFlag.address), inFlag);
    await fromFlag.stop();
  });

  test('every line the gateway writes is JSON; library notices go through the JSON log', async () => {
    const gateway = await start({
      env: baseEnv({ PORT: '0', LOG_LEVEL: 'debug', DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase }),
      cwd: workFolder(),
    });
    const client = await connectModern(gateway.mcpUrl);
    await client.callTool({ target: 'dags' });
    await client.close();
    await gateway.stop();
    const lines = [...gateway.stdout().split('\n'), ...gateway.stderr().split('\n')].filter(
      (line) => line !== '',
    );
    assert.ok(lines.length > 3);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
    // The SDK prints this notice when a handler answers in JSON: a choice of ours, logged at debug.
    const notice = lines
      .map((line) => JSON.parse(line) as { level?: number; msg?: string })
      .find((entry) => entry.msg?.startsWith("responseMode: 'json'"));
    if (notice !== undefined) assert.equal(notice.level, 20, 'logged at debug');
  });
});
