// Native TLS end to end: a test CA made at test time, the real gateway serving HTTPS from
// TLS_CERT_FILE/TLS_KEY_FILE, both MCP clients (v2 and v1 SDK) reading the real Dagu over HTTP/1.1 and
// HTTP/2, plain HTTP refused on the TLS port, and a renewed certificate (renamed over the served
// files) shown to new connections without a restart while an invalid one is refused and logged.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { ROOT } from '../../support/bin.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { CONNECTORS } from '../../support/gateway.ts';
import { http2Post } from '../../support/h2.ts';
import { runToEnd } from '../../support/run.ts';
import {
  createTestCa,
  type IssuedCertificate,
  peerCertificate,
  type RunningTlsGateway,
  readDagsOverHttps,
  replaceByRename,
  startTlsGateway,
  type TestCa,
  trustingFetch,
} from '../../support/tls.ts';

let dagu: TestDagu;
let ca: TestCa;
let first: IssuedCertificate;
let second: IssuedCertificate;
/** The folder the gateway's TLS_CERT_FILE and TLS_KEY_FILE live in (replaced during the test). */
let served: string;
let gateway: RunningTlsGateway;

const servedCert = () => join(served, 'tls.crt');
const servedKey = () => join(served, 'tls.key');

before(async () => {
  dagu = await getTestDagu();
  ca = createTestCa();
  first = ca.issue('first');
  second = ca.issue('second');
  served = mkdtempSync(join(tmpdir(), 'gateway-served-tls-'));
  copyFileSync(first.certFile, servedCert());
  copyFileSync(first.keyFile, servedKey());
  gateway = await startTlsGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    TLS_CERT_FILE: servedCert(),
    TLS_KEY_FILE: servedKey(),
  });
});
after(async () => {
  await gateway?.close();
  await dagu?.stop();
  ca?.remove();
  if (served) rmSync(served, { recursive: true, force: true });
});

describe('HTTPS with the test CA', () => {
  test('the gateway logs the certificate it serves and listens on https', () => {
    const loaded = gateway.log.lines.find((line) => line.msg === 'TLS certificate loaded');
    assert.equal(loaded?.serial, first.serial);
    assert.equal(loaded?.http2, true);
  });

  for (const era of ['modern', 'legacy'] as const) {
    for (const allowH2 of [false, true]) {
      const version = allowH2 ? '2.0' : '1.1';
      test(`the ${era} SDK client lists tools and reads over HTTP/${version === '2.0' ? '2' : '1.1'}`, async () => {
        const https = trustingFetch(ca.caPem, { allowH2 });
        const seen = gateway.httpVersions.length;
        const client = await CONNECTORS[era](gateway.mcpUrl, {}, { fetch: https.fetch });
        await readDagsOverHttps(client, https);
        const versions = new Set(gateway.httpVersions.slice(seen));
        assert.deepEqual([...versions], [version], 'every request used the expected HTTP version');
      });
    }
  }

  test('the protected-resource metadata names the https URL the client used', async () => {
    const https = trustingFetch(ca.caPem);
    try {
      const answer = await https.fetch(`${gateway.baseUrl}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(answer.status, 200);
      const metadata = (await answer.json()) as { resource: string };
      assert.equal(metadata.resource, gateway.mcpUrl);
      assert.match(metadata.resource, /^https:\/\/localhost:\d+\/mcp$/);
    } finally {
      await https.close();
    }
  });

  test('an untrusted certificate is refused by the client (the CA is what makes it work)', async () => {
    await assert.rejects(
      fetch(`${gateway.baseUrl}/healthz`),
      (error: Error & { cause?: { code?: string } }) => {
        assert.match(String(error.cause?.code), /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/);
        return true;
      },
    );
  });

  test('plain HTTP to the TLS port: accepted, closed within 1 s without an HTTP answer, and https is still served', async () => {
    const outcome = await new Promise<{ connected: boolean; received: string; ms: number }>((resolve) => {
      const started = performance.now();
      let connected = false;
      let received = '';
      const socket = netConnect(gateway.port, '127.0.0.1', () => {
        connected = true;
        socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ connected, received, ms: performance.now() - started }));
    });
    assert.ok(outcome.connected, 'the TLS port accepted the connection');
    assert.doesNotMatch(outcome.received, /HTTP\//, 'no HTTP answer in plain text');
    // The TLS layer refuses the bytes at once; the handshake bound (HEADERS_TIMEOUT_MS, 10 s) is far.
    assert.ok(outcome.ms < 1000, `closed after ${outcome.ms} ms`);
    await assert.rejects(
      fetch(`http://127.0.0.1:${gateway.port}/healthz`),
      (error: Error & { cause?: { code?: string } }) => {
        assert.equal(error.cause?.code, 'UND_ERR_SOCKET', 'the server closed the socket');
        return true;
      },
    );
    const https = trustingFetch(ca.caPem);
    try {
      assert.equal((await https.fetch(`${gateway.baseUrl}/healthz`)).status, 200);
    } finally {
      await https.close();
    }
  });

  test('a node:http2 client negotiates h2 by ALPN and calls dagu_read', async () => {
    const session = http2Connect(gateway.baseUrl, { ca: ca.caPem });
    try {
      await new Promise<void>((resolve, reject) => {
        session.once('connect', () => resolve());
        session.once('error', reject);
      });
      assert.equal(session.alpnProtocol, 'h2');
      const answer = await http2Post(
        session,
        '/mcp',
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'dagu_read', arguments: { target: 'dags' } },
        },
      );
      assert.equal(answer.status, 200);
      const result = answer.body.result as { isError?: boolean; structuredContent?: { target?: string } };
      assert.notEqual(result.isError, true, JSON.stringify(answer.body));
      assert.equal(result.structuredContent?.target, 'dags');
    } finally {
      session.close();
    }
  });
});

describe('certificate renewal without a restart', () => {
  test('files renamed over the served ones: new connections get the new certificate', async () => {
    assert.equal((await peerCertificate(gateway.port, ca.caPem)).serialNumber.toUpperCase(), first.serial);
    const mark = gateway.log.lines.length;
    const reloaded = gateway.log.next(
      (line) => line.msg === 'TLS certificate reloaded' && line.serial === second.serial,
      mark,
    );
    replaceByRename(servedKey(), second.key);
    replaceByRename(servedCert(), second.cert);
    await reloaded;
    assert.equal((await peerCertificate(gateway.port, ca.caPem)).serialNumber.toUpperCase(), second.serial);
    // And the MCP clients keep working against the renewed certificate.
    const https = trustingFetch(ca.caPem);
    const client = await CONNECTORS.modern(gateway.mcpUrl, {}, { fetch: https.fetch });
    try {
      assert.notEqual((await client.callTool({ target: 'dags' })).isError, true);
    } finally {
      await client.close();
      await https.close();
    }
  });

  test('an unreadable certificate is logged and the current one kept', async () => {
    const mark = gateway.log.lines.length;
    const refused = gateway.log.next(
      (line) =>
        line.msg === 'TLS certificate reload failed; still serving the current certificate' &&
        String(line.reason).startsWith('TLS_CERT_FILE:'),
      mark,
    );
    replaceByRename(servedCert(), 'not a certificate\n');
    const line = await refused;
    assert.equal(line.level, 40, 'a warning');
    assert.equal(line.serial, second.serial);
    assert.equal((await peerCertificate(gateway.port, ca.caPem)).serialNumber.toUpperCase(), second.serial);
  });

  test('a certificate whose key is not the served key is logged and the current pair kept', async () => {
    const mark = gateway.log.lines.length;
    const refused = gateway.log.next(
      (line) =>
        line.msg === 'TLS certificate reload failed; still serving the current certificate' &&
        String(line.reason).startsWith('TLS_KEY_FILE:'),
      mark,
    );
    replaceByRename(servedCert(), first.cert);
    const line = await refused;
    assert.doesNotMatch(JSON.stringify(line), /PRIVATE KEY/, 'the key never reaches the log');
    assert.equal((await peerCertificate(gateway.port, ca.caPem)).serialNumber.toUpperCase(), second.serial);
  });
});

describe('start-up with TLS files that cannot serve', () => {
  const base = () => ({ HOST: '127.0.0.1', PORT: '0', AUDIT_LOG: 'stderr', DAGU_URL: dagu.url });

  test('a missing file stops the start naming its setting', async () => {
    const config = loadConfig({
      ...base(),
      TLS_CERT_FILE: join(ca.dir, 'absent.pem'),
      TLS_KEY_FILE: first.keyFile,
    });
    await assert.rejects(buildApp(config, { logger: false }), /^Error: TLS_CERT_FILE: cannot read .*ENOENT/);
  });

  test('a key that does not match the certificate stops the start naming TLS_KEY_FILE', async () => {
    const config = loadConfig({ ...base(), TLS_CERT_FILE: first.certFile, TLS_KEY_FILE: second.keyFile });
    await assert.rejects(buildApp(config, { logger: false }), /^Error: TLS_KEY_FILE: /);
  });
});

test("docs/https.md's development certificate, made by its openssl line as written: served, and trusted by Node through NODE_EXTRA_CA_CERTS for both names", async () => {
  const page = readFileSync(join(ROOT, 'docs', 'https.md'), 'utf8');
  const line = page.split('\n').find((entry) => entry.startsWith('openssl req -x509'));
  assert.ok(line, 'the openssl line');
  const folder = mkdtempSync(join(tmpdir(), 'gateway-dev-cert-'));
  try {
    const made = await runToEnd('openssl', line.split(' ').slice(1), {
      cwd: folder,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    assert.equal(made.code, 0, made.stderr);
    const served = await startTlsGateway({
      DAGU_URL: 'http://127.0.0.1:9',
      TLS_CERT_FILE: join(folder, 'dev-cert.pem'),
      TLS_KEY_FILE: join(folder, 'dev-key.pem'),
    });
    try {
      // A separate Node, as a client is: NODE_EXTRA_CA_CERTS is read when Node starts.
      const script = `for (const host of ['127.0.0.1', 'localhost']) { const answer = await fetch('https://' + host + ':${served.port}/healthz'); console.log(host, answer.status); }`;
      const ran = await runToEnd(process.execPath, ['--input-type=module', '-e', script], {
        cwd: folder,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_EXTRA_CA_CERTS: 'dev-cert.pem' },
      });
      assert.equal(ran.code, 0, ran.stderr);
      assert.deepEqual(ran.stdout.trim().split('\n'), ['127.0.0.1 200', 'localhost 200']);
      // Without it the same client refuses the certificate.
      const untrusted = await runToEnd(process.execPath, ['--input-type=module', '-e', script], {
        cwd: folder,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
      assert.notEqual(untrusted.code, 0);
    } finally {
      await served.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
