// The compose stack's init step (deploy/compose/init.mjs) against a real Dagu 2.x in builtin auth mode,
// as docker-compose.yml starts it (first admin from the environment): it writes an API key file and a
// Dagu API key, the gateway serves a tool call with both, and running it again keeps what still works.
// Docker itself is not run here (no engine on this machine); the script runs with this Node.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bearer } from '../../support/auth-fixtures.ts';
import { type DaguInstance, daguApi, daguLogin, startDagu } from '../../support/dagu.ts';
import { repoPath } from '../../support/deploy-tools.ts';
import { connectModern, type RunningGateway, startGateway } from '../../support/gateway.ts';

const ADMIN = { username: 'admin', password: 'compose-admin-password' };

let dagu: DaguInstance;
let secrets: string;
let gateway: RunningGateway | undefined;

before(async () => {
  // The stack's Dagu, whatever generation the rest of the suite runs against.
  dagu = await startDagu({
    generation: 2,
    builtinAuth: { ...ADMIN, tokenSecret: 'compose-init-test-token-secret-0123456789' },
  });
  secrets = mkdtempSync(join(tmpdir(), 'compose-secrets-'));
});
after(async () => {
  await gateway?.close();
  await dagu?.stop();
  if (secrets !== undefined) rmSync(secrets, { recursive: true, force: true });
});

function runInit(extra: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', repoPath('deploy', 'compose', 'init.mjs')], {
    encoding: 'utf8',
    cwd: repoPath(),
    env: {
      PATH: process.env.PATH,
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      DAGU_ADMIN_USERNAME: ADMIN.username,
      DAGU_ADMIN_PASSWORD: ADMIN.password,
      SECRETS_DIR: secrets,
      // In the image this is /app/dist/auth/api-keys.js; here the same module from the sources.
      API_KEYS_MODULE: repoPath('src', 'auth', 'api-keys.ts'),
      ...extra,
    },
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

const file = (name: string) => join(secrets, name);
const read = (name: string) => readFileSync(file(name), 'utf8');

async function daguKeys(): Promise<
  Array<{ id: string; name: string; role: string; allowedSurfaces: string[] }>
> {
  const { token } = await daguLogin(dagu, ADMIN);
  const listed = await daguApi({ ...dagu, token }, '/api-keys');
  return (
    listed.body as { apiKeys: Array<{ id: string; name: string; role: string; allowedSurfaces: string[] }> }
  ).apiKeys;
}

let mcpKey = '';

test('first run: an API key file, a viewer REST-only Dagu key, the MCP key printed once', async () => {
  const first = runInit();
  assert.equal(first.status, 0, first.out);
  mcpKey = /\b(dmg_[A-Za-z0-9_-]{43})\b/.exec(first.out)?.[1] ?? '';
  assert.ok(mcpKey, first.out);
  for (const name of ['keys.yaml', 'dagu-api-token'])
    assert.equal(statSync(file(name)).mode & 0o777, 0o600, name);
  assert.ok(!read('keys.yaml').includes(mcpKey), 'only the hash is stored');

  const token = read('dagu-api-token').trim();
  assert.match(token, /^dagu_/);
  assert.equal((await daguApi({ ...dagu, token }, '/dags?perPage=1')).status, 200);
  assert.equal((await daguApi(dagu, '/dags?perPage=1')).status, 401, 'Dagu requires a credential');
  const keys = await daguKeys();
  assert.deepEqual(
    keys.map(({ name, role, allowedSurfaces }) => ({ name, role, allowedSurfaces })),
    [{ name: 'dagu-mcp-gateway', role: 'viewer', allowedSurfaces: ['rest_api'] }],
  );
});

test('the gateway serves a tool call with the files init wrote', async () => {
  gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    DAGU_API_TOKEN: read('dagu-api-token').trim(),
    AUTH_API_KEYS_FILE: file('keys.yaml'),
  });
  const client = await connectModern(gateway.mcpUrl, bearer(mcpKey));
  try {
    const result = await client.callTool({ target: 'dags' });
    assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
    assert.equal(result.structuredContent?.target, 'dags');
  } finally {
    await client.close();
  }
  const anonymous = await fetch(gateway.mcpUrl, { method: 'POST' });
  assert.equal(anonymous.status, 401);
});

test('running init again keeps both; a lost Dagu key is replaced, not added to', async () => {
  const before = { keys: read('keys.yaml'), token: read('dagu-api-token') };
  const again = runInit();
  assert.equal(again.status, 0, again.out);
  assert.doesNotMatch(again.out, /dmg_/, 'no new MCP key is printed');
  assert.deepEqual({ keys: read('keys.yaml'), token: read('dagu-api-token') }, before);

  unlinkSync(file('dagu-api-token'));
  const replaced = runInit();
  assert.equal(replaced.status, 0, replaced.out);
  assert.notEqual(read('dagu-api-token'), before.token);
  assert.equal((await daguApi({ ...dagu, token: before.token.trim() }, '/dags?perPage=1')).status, 401);
  assert.equal((await daguKeys()).length, 1);
});

test('a wrong admin password or a refused DAGU_API_TOKEN fails the step with the reason', () => {
  unlinkSync(file('dagu-api-token'));
  const wrong = runInit({ DAGU_ADMIN_PASSWORD: 'not-the-password' });
  assert.equal(wrong.status, 1);
  assert.match(wrong.out, /Dagu login as admin failed: HTTP 401/);
  const refused = runInit({ DAGU_API_TOKEN: 'dagu_not_a_key' });
  assert.equal(refused.status, 1);
  assert.match(refused.out, /Dagu refuses the DAGU_API_TOKEN set in \.env/);
  assert.doesNotMatch(refused.out, /dagu_not_a_key/, 'the token is not echoed');
});
