import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CommandLineError, helpText, loadDotEnv, parseCommandLine } from '../../src/cli.ts';
import { SETTINGS } from '../../src/settings.ts';

test('every setting is a flag that comes back under its environment name', () => {
  const argv = SETTINGS.flatMap((setting, index) => [setting.flag, `value-${index}`]);
  const command = parseCommandLine(argv);
  assert.equal(command.kind, 'serve');
  assert.equal(command.stdio, false);
  assert.deepEqual(
    command.settings,
    Object.fromEntries(SETTINGS.map((setting, index) => [setting.name, `value-${index}`])),
  );
});

test('--flag=value, --stdio, --help, --version', () => {
  assert.deepEqual(parseCommandLine(['--dagu-url=http://dagu:8080', '--stdio']), {
    kind: 'serve',
    stdio: true,
    settings: { DAGU_URL: 'http://dagu:8080' },
  });
  assert.deepEqual(parseCommandLine([]), { kind: 'serve', stdio: false, settings: {} });
  assert.deepEqual(parseCommandLine(['-h']), { kind: 'help' });
  assert.deepEqual(parseCommandLine(['--port', '1', '--help']), { kind: 'help' });
  assert.deepEqual(parseCommandLine(['--version']), { kind: 'version' });
  assert.deepEqual(parseCommandLine(['keygen', '--name', 'ci']), { kind: 'keygen', argv: ['--name', 'ci'] });
});

test('unknown flags, stray arguments and missing values are refused with a pointer to --help', () => {
  for (const argv of [['--dagu'], ['serve'], ['--port'], ['--stdio=yes']]) {
    assert.throws(
      () => parseCommandLine(argv),
      (error: unknown) => error instanceof CommandLineError && /\(see --help\)$/.test(error.message),
      argv.join(' '),
    );
  }
});

test('help lists every setting once, with its default', () => {
  const help = helpText('9.9.9');
  assert.match(help, /^dagu-mcp-gateway 9\.9\.9/);
  for (const setting of SETTINGS) {
    const lines = help.split('\n').filter((line) => line.trimStart().startsWith(`${setting.flag} `));
    assert.equal(lines.length, 1, setting.flag);
    if (setting.default !== undefined)
      assert.ok(lines[0]!.includes(`default ${setting.default}`), setting.flag);
  }
});

test('the HTTPS settings are flags like every other and --help lists them', () => {
  assert.deepEqual(
    parseCommandLine([
      '--tls-cert-file',
      '/tls/crt.pem',
      '--tls-key-file=/tls/key.pem',
      '--trust-proxy',
      '10.0.0.0/8',
    ]),
    {
      kind: 'serve',
      stdio: false,
      settings: { TLS_CERT_FILE: '/tls/crt.pem', TLS_KEY_FILE: '/tls/key.pem', TRUST_PROXY: '10.0.0.0/8' },
    },
  );
  const help = helpText('9.9.9');
  for (const name of ['TLS_CERT_FILE', 'TLS_KEY_FILE', 'TRUST_PROXY']) assert.ok(help.includes(name), name);
});

test('.env is read from the folder; variables already in the environment win', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-dotenv-'));
  const keys = ['GATEWAY_DOTENV_TEST_SET', 'GATEWAY_DOTENV_TEST_NEW'] as const;
  try {
    assert.equal(loadDotEnv(folder), undefined, 'no .env: nothing read');
    writeFileSync(join(folder, '.env'), `${keys[0]}=from-file\n${keys[1]}=from-file\n`);
    process.env[keys[0]] = 'from-environment';
    assert.equal(loadDotEnv(folder), join(folder, '.env'));
    assert.equal(process.env[keys[0]], 'from-environment');
    assert.equal(process.env[keys[1]], 'from-file');
  } finally {
    for (const key of keys) delete process.env[key];
    rmSync(folder, { recursive: true, force: true });
  }
});
