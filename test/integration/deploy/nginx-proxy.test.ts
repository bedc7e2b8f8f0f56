// The reverse-proxy recipe (deploy/nginx/dagu-mcp-gateway.conf) run for real: Debian's nginx, started
// by the test with the recipe (only its listen address, certificate paths and upstream port replaced),
// terminates TLS with a test CA's certificate in front of a started gateway that trusts it through
// TRUST_PROXY. Both MCP clients read through it over https; the 401 challenge and the metadata name
// the https URL the client used; forwarded headers from a caller outside TRUST_PROXY are ignored; an
// event stream passes through unbuffered; the body limit holds at the proxy.
// scripts/nginx.sh installs nginx when it is missing; under CI=true a missing nginx fails, elsewhere
// the tests skip and say why.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, newApiKey, writeKeysFile } from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { readRepoFile, repoPath } from '../../support/deploy-tools.ts';
import { CONNECTORS, type RunningGateway, startGateway } from '../../support/gateway.ts';
import {
  createTestCa,
  type IssuedCertificate,
  readDagsOverHttps,
  type TestCa,
  trustingFetch,
} from '../../support/tls.ts';

const RECIPE = readRepoFile('deploy', 'nginx', 'dagu-mcp-gateway.conf');

/** nginx's path, installed on first use; the reason when it cannot be had (a failure under CI). */
function nginxBinary(): { path?: string; reason?: string } {
  const result = spawnSync('bash', [repoPath('scripts', 'nginx.sh')], { encoding: 'utf8' });
  const path = (result.stdout ?? '').trim().split('\n').at(-1);
  if (result.status === 0 && path) return { path };
  return { reason: `nginx unavailable: ${(result.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
}
const nginx = nginxBinary();
const skip = skipUnlessCI(nginx.reason ?? false);

/** The recipe with one replacement per entry; each pattern must match exactly once. */
function fromRecipe(replacements: Array<[RegExp, string]>): string {
  let text = RECIPE;
  for (const [pattern, replacement] of replacements) {
    const found = text.match(new RegExp(pattern.source, 'gm'))?.length ?? 0;
    assert.equal(found, 1, `the recipe has exactly one ${pattern}`);
    text = text.replace(new RegExp(pattern.source, 'm'), replacement);
  }
  return text;
}

interface RunningNginx {
  port: number;
  publicUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts nginx in the foreground (one process, its own prefix, pid file and logs in a temp folder) with
 * the recipe pointed at `upstreamPort`; resolves once the pid file exists (nginx writes it after it
 * has opened its listening sockets), rejects with its output if it exits first.
 */
async function startNginx(upstreamPort: number, certificate: IssuedCertificate): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-nginx-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'dagu-mcp-gateway.conf'),
    fromRecipe([
      [/^\s*listen 443 ssl http2;$/, `    listen 127.0.0.1:${port} ssl http2;`],
      [/^\s*ssl_certificate \S+;$/, `    ssl_certificate ${certificate.certFile};`],
      [/^\s*ssl_certificate_key \S+;$/, `    ssl_certificate_key ${certificate.keyFile};`],
      [/^\s*server 127\.0\.0\.1:8090;$/, `    server 127.0.0.1:${upstreamPort};`],
    ]),
  );
  const pidFile = join(dir, 'nginx.pid');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${pidFile};
error_log stderr warn;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/dagu-mcp-gateway.conf;
}
`,
  );
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'];
  const checked = spawnSync(nginx.path!, ['-t', ...args], { encoding: 'utf8' });
  assert.equal(checked.status, 0, `nginx -t refuses the recipe:\n${checked.stderr}`);
  // `nginx -t` writes the pid file too (to check its path): only the running nginx's may count.
  rmSync(pidFile, { force: true });
  const child: ChildProcess = spawn(nginx.path!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const watcher = watch(dir, () => {
      if (existsSync(pidFile)) done();
    });
    const onExit = (code: number | null) => {
      watcher.close();
      reject(new Error(`nginx exited (${code}) before it was ready:\n${output}`));
    };
    function done() {
      watcher.close();
      child.off('exit', onExit);
      resolve();
    }
    child.once('exit', onExit);
    if (existsSync(pidFile)) done();
  });
  return {
    port,
    publicUrl: `https://localhost:${port}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const KEY = newApiKey('proxy-user');
let dagu: TestDagu;
let ca: TestCa;
let certificate: IssuedCertificate;
let gateway: RunningGateway;
let proxy: RunningNginx;

before(async () => {
  if (skip) return;
  dagu = await getTestDagu();
  ca = createTestCa();
  certificate = ca.issue('proxy');
  gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'proxy-user', key: KEY }]),
    // nginx connects from 127.0.0.1: its forwarded headers are believed.
    TRUST_PROXY: '127.0.0.1',
  });
  proxy = await startNginx(Number(new URL(gateway.baseUrl).port), certificate);
});
after(async () => {
  await proxy?.stop();
  await gateway?.close();
  await dagu?.stop();
  ca?.remove();
});

describe('the nginx recipe terminates TLS in front of the gateway', { skip }, () => {
  for (const era of ['modern', 'legacy'] as const) {
    test(`the ${era} SDK client reads through nginx over https`, async () => {
      const https = trustingFetch(ca.caPem);
      const client = await CONNECTORS[era](`${proxy.publicUrl}/mcp`, bearer(KEY), { fetch: https.fetch });
      await readDagsOverHttps(client, https);
    });
  }

  test('the metadata names the https URL the client used; the API-key 401 sends no one into OAuth', async () => {
    const https = trustingFetch(ca.caPem);
    try {
      const refused = await https.fetch(`${proxy.publicUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="dagu-mcp-gateway"');
      const metadataUrl = `${proxy.publicUrl}/.well-known/oauth-protected-resource/mcp`;
      const metadata = (await (await https.fetch(metadataUrl)).json()) as { resource: string };
      assert.equal(metadata.resource, `${proxy.publicUrl}/mcp`);
    } finally {
      await https.close();
    }
  });

  test('the body limit holds at the proxy (client_max_body_size)', async () => {
    const https = trustingFetch(ca.caPem);
    try {
      const answer = await https.fetch(`${proxy.publicUrl}/mcp`, {
        method: 'POST',
        headers: { ...bearer(KEY), 'content-type': 'application/json' },
        body: JSON.stringify({ padding: 'x'.repeat(100 * 1024) }),
      });
      assert.equal(answer.status, 413);
      await answer.arrayBuffer();
    } finally {
      await https.close();
    }
  });
});

describe('forwarded headers count only from TRUST_PROXY', { skip }, () => {
  const forged = {
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'localhost:4443',
    'x-forwarded-for': '203.0.113.9',
  };
  const metadataOf = async (baseUrl: string) =>
    (await (
      await fetch(`${baseUrl}/.well-known/oauth-protected-resource/mcp`, { headers: forged })
    ).json()) as { resource: string };

  test('a caller outside TRUST_PROXY cannot change the public URL', async () => {
    const elsewhere = await startGateway({
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'proxy-user', key: KEY }]),
      TRUST_PROXY: '10.9.9.9',
    });
    const unset = await startGateway({
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'proxy-user', key: KEY }]),
    });
    try {
      assert.equal((await metadataOf(elsewhere.baseUrl)).resource, elsewhere.mcpUrl);
      assert.equal((await metadataOf(unset.baseUrl)).resource, unset.mcpUrl);
      assert.match(elsewhere.mcpUrl, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    } finally {
      await elsewhere.close();
      await unset.close();
    }
  });

  test('the same headers from the trusted proxy address are believed', async () => {
    assert.equal((await metadataOf(gateway.baseUrl)).resource, 'https://localhost:4443/mcp');
  });
});

describe('event streams pass through nginx unbuffered', { skip }, () => {
  test('the recipe turns response buffering off and speaks HTTP/1.1 to the upstream', () => {
    const location = RECIPE.slice(RECIPE.indexOf('location / {'));
    assert.match(location, /^\s*proxy_buffering off;$/m);
    assert.match(location, /^\s*proxy_http_version 1\.1;$/m);
    assert.match(location, /^\s*proxy_set_header Connection "";$/m);
  });

  test('the first event arrives while the upstream still holds the stream open', async () => {
    // An upstream that writes one event, then waits for the client to have read it before it ends:
    // a buffering proxy would hold the event back until the end, and this test would time out.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const upstream: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write('event: message\ndata: {"first":true}\n\n');
      void released.then(() => response.end('event: message\ndata: {"last":true}\n\n'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const streaming = await startNginx((upstream.address() as AddressInfo).port, certificate);
    const https = trustingFetch(ca.caPem);
    try {
      const answer = await https.fetch(`${streaming.publicUrl}/events`);
      assert.equal(answer.headers.get('content-type'), 'text/event-stream');
      const reader = answer.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('\n\n')) {
        const { value, done } = await reader.read();
        assert.equal(done, false, 'the stream ended before its first event arrived');
        text += decoder.decode(value, { stream: true });
      }
      assert.match(text, /"first":true/);
      assert.doesNotMatch(text, /"last":true/, 'the upstream has not ended yet');
      release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      assert.match(text, /"last":true/);
    } finally {
      release();
      await https.close();
      await streaming.stop();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});
