// One-shot init step of the docker-compose stack (service `init`, in the gateway's own image). It leaves
// two files in the shared volume for the gateway, and is safe to run again (`docker compose up` does):
//
//   keys.yaml        AUTH_API_KEYS_FILE with one API key for MCP clients. Created once; the key itself
//                    is printed once (`docker compose logs init`), only its SHA-256 is stored.
//   dagu-api-token   The gateway's own credential for Dagu (DAGU_API_TOKEN). Dagu 2.x has no static
//                    token: this is a Dagu API key (role viewer, REST only) created with the login of
//                    the admin Dagu made from DAGU_ADMIN_USERNAME/DAGU_ADMIN_PASSWORD in .env, or the
//                    DAGU_API_TOKEN set in .env. A token Dagu still accepts is kept.
//
// Environment: DAGU_URL, DAGU_API_BASE (/api/v1), DAGU_ADMIN_USERNAME, DAGU_ADMIN_PASSWORD,
// DAGU_API_TOKEN (optional), SECRETS_DIR, API_KEYS_MODULE (the gateway's api-keys module in the image).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const env = process.env;
const daguUrl = (env.DAGU_URL ?? 'http://dagu:8080').replace(/\/+$/, '');
const api = `${daguUrl}${env.DAGU_API_BASE ?? '/api/v1'}`;
const secretsDir = env.SECRETS_DIR ?? '/var/lib/dagu-mcp-gateway';
const keysModule = env.API_KEYS_MODULE ?? '/app/dist/auth/api-keys.js';
/** The name of the Dagu API key this step owns (Dagu's community edition allows two keys in all). */
const DAGU_KEY_NAME = 'dagu-mcp-gateway';

const log = (message) => console.log(`init: ${message}`);
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function writeSecret(name, text) {
  const path = join(secretsDir, name);
  const next = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(next, text, { mode: 0o600 });
  renameSync(next, path);
}

async function dagu(path, { method = 'GET', token, body } = {}) {
  const headers = { accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${api}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

async function waitForDagu() {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await dagu('/health')).status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`Dagu did not answer ${api}/health within 120 s`);
    await sleep(1000);
  }
}

/** True when Dagu accepts the token on a REST read (what the gateway does with it). */
async function accepted(token) {
  return (await dagu('/dags?perPage=1', { token })).status === 200;
}

async function ensureMcpKey() {
  const path = join(secretsDir, 'keys.yaml');
  if (existsSync(path)) {
    log(`${path} exists; kept (delete it and run \`docker compose up init\` for a new key)`);
    return;
  }
  const { sha256, parseApiKeys } = await import(pathToFileURL(keysModule).href);
  const key = `dmg_${randomBytes(32).toString('base64url')}`;
  const yaml = [
    '# Created by the compose init step; add entries with `npm run keygen`.',
    'keys:',
    '  - name: compose',
    `    sha256: ${sha256(key).toString('hex')}`,
    '    surfaces: [mcp]',
    '    role: viewer',
    '',
  ].join('\n');
  parseApiKeys(yaml, path); // the validation the gateway applies at start-up
  writeSecret('keys.yaml', yaml);
  log(`MCP API key (shown once; clients send "Authorization: Bearer <key>"):\n\n    ${key}\n`);
}

async function ensureDaguToken() {
  const path = join(secretsDir, 'dagu-api-token');
  const given = env.DAGU_API_TOKEN?.trim();
  if (given) {
    if (!(await accepted(given))) throw new Error('Dagu refuses the DAGU_API_TOKEN set in .env');
    writeSecret('dagu-api-token', given);
    log('using DAGU_API_TOKEN from .env');
    return;
  }
  if (existsSync(path) && (await accepted(readFileSync(path, 'utf8').trim()))) {
    log('the Dagu API key created before is still accepted; kept');
    return;
  }
  const username = env.DAGU_ADMIN_USERNAME || 'admin';
  const password = env.DAGU_ADMIN_PASSWORD;
  if (!password) throw new Error('DAGU_ADMIN_PASSWORD is not set (see .env.example)');
  const login = await dagu('/auth/login', { method: 'POST', body: { username, password } });
  if (login.status !== 200 || typeof login.json?.token !== 'string') {
    throw new Error(`Dagu login as ${username} failed: HTTP ${login.status} ${login.text.slice(0, 200)}`);
  }
  const admin = login.json.token;
  // A key of ours whose secret is lost is replaced, not added to (community edition: two keys at most).
  const listed = await dagu('/api-keys', { token: admin });
  for (const old of listed.json?.apiKeys ?? []) {
    if (old.name === DAGU_KEY_NAME)
      await dagu(`/api-keys/${encodeURIComponent(old.id)}`, { method: 'DELETE', token: admin });
  }
  const created = await dagu('/api-keys', {
    method: 'POST',
    token: admin,
    body: {
      name: DAGU_KEY_NAME,
      description: 'Dagu MCP Gateway (read-only, REST)',
      role: 'viewer',
      allowedSurfaces: ['rest_api'],
      attributionClass: 'service_account',
    },
  });
  if (created.status !== 201 || typeof created.json?.key !== 'string') {
    throw new Error(`creating the Dagu API key failed: HTTP ${created.status} ${created.text.slice(0, 300)}`);
  }
  writeSecret('dagu-api-token', created.json.key);
  log(`created Dagu API key ${DAGU_KEY_NAME} (role viewer, REST only)`);
}

try {
  await ensureMcpKey();
  await waitForDagu();
  await ensureDaguToken();
} catch (error) {
  console.error(`init: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
}
