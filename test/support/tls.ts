// A test certificate authority made at test time with the `openssl` command (Node's crypto cannot issue
// X.509 certificates): a CA, server certificates for localhost and 127.0.0.1 signed by it, and files
// replaced the way renewal tools do it (write beside, rename over). Keys live only in a temp folder.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type PeerCertificate, connect as tlsConnect } from 'node:tls';
import { Agent, type RequestInit as UndiciRequestInit, fetch as undiciFetch } from 'undici';
import { buildApp, type GatewayApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { TestClient } from './gateway.ts';

export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
  /** Upper-case hex without separators, as X509Certificate.serialNumber gives it. */
  serial: string;
  fingerprint256: string;
}

export interface TestCa {
  dir: string;
  /** The CA certificate (PEM), what clients trust. */
  caPem: string;
  caFile: string;
  /** Issues a server certificate for localhost and 127.0.0.1 (files in `dir`, named after `name`). */
  issue(name: string): IssuedCertificate;
  /** Removes the folder with every key. */
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
  openssl(
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=dagu-mcp-gateway test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'server.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '',
    ].join('\n'),
  );
  const caFile = join(dir, 'ca.pem');
  return {
    dir,
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    issue(name) {
      const keyFile = join(dir, `${name}.key`);
      const certFile = join(dir, `${name}.pem`);
      openssl(['req', ...EC_KEY, '-keyout', keyFile, '-out', `${name}.csr`, '-subj', '/CN=localhost'], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-set_serial',
          `0x${randomBytes(8).toString('hex')}`,
          '-days',
          '2',
          '-extfile',
          'server.ext',
          '-out',
          certFile,
        ],
        dir,
      );
      const cert = readFileSync(certFile, 'utf8');
      const parsed = new X509Certificate(cert);
      return {
        certFile,
        keyFile,
        cert,
        key: readFileSync(keyFile, 'utf8'),
        serial: parsed.serialNumber.toUpperCase(),
        fingerprint256: parsed.fingerprint256,
      };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Replaces `target` with `content` the way renewal tools do: written beside it, renamed over it. */
export function replaceByRename(target: string, content: string): void {
  const staging = `${target}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(staging, content, { mode: 0o600 });
  renameSync(staging, target);
}

/** The certificate a fresh TLS connection to 127.0.0.1:`port` is shown (verified against `ca`). */
export function peerCertificate(port: number, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () => {
      const peer = socket.getPeerCertificate();
      socket.end();
      resolve(peer);
    });
    socket.once('error', reject);
  });
}

/**
 * A `fetch` for the MCP clients' transports that trusts the test CA: undici's own fetch with an Agent
 * (Node's global fetch is an older bundled undici that does not take this package's dispatchers).
 * `allowH2` lets the agent pick HTTP/2 by ALPN; by default undici speaks HTTP/1.1.
 */
export function trustingFetch(
  ca: string,
  options: { allowH2?: boolean } = {},
): { fetch: (url: string | URL, init?: RequestInit) => Promise<Response>; close(): Promise<void> } {
  const dispatcher = new Agent({ connect: { ca }, allowH2: options.allowH2 === true });
  return {
    fetch: async (url, init) =>
      (await undiciFetch(url, {
        ...(init as UndiciRequestInit),
        dispatcher,
      })) as unknown as Response,
    close: () => dispatcher.close(),
  };
}

/** Lists the tools and reads `dags` with a client connected over https, then closes it and the agent. */
export async function readDagsOverHttps(
  client: TestClient,
  https: { close(): Promise<void> },
): Promise<void> {
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'dagu_read'));
    const result = await client.callTool({ target: 'dags' });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    assert.equal(result.structuredContent?.target, 'dags');
  } finally {
    await client.close();
    await https.close();
  }
}

export interface LogLines {
  stream: Writable;
  /** Every JSON line so far. */
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first line from now on (or already seen after `since`) that `match` accepts. */
  next(match: (line: Record<string, unknown>) => boolean, since?: number): Promise<Record<string, unknown>>;
}

/** A log stream for buildApp that keeps the JSON lines, so tests wait for an event the gateway logs. */
export function logLines(): LogLines {
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{
    match: (line: Record<string, unknown>) => boolean;
    resolve(line: Record<string, unknown>): void;
  }> = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString();
      let end = pending.indexOf('\n');
      while (end >= 0) {
        const line = JSON.parse(pending.slice(0, end)) as Record<string, unknown>;
        pending = pending.slice(end + 1);
        lines.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.match(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
        end = pending.indexOf('\n');
      }
      done();
    },
  });
  return {
    stream,
    lines,
    next: (match, since) => {
      const seen = since === undefined ? undefined : lines.slice(since).find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

export interface RunningTlsGateway extends GatewayApp {
  port: number;
  /** The audit log file (a fresh temp file). */
  auditPath: string;
  /** `https://localhost:<port>`. */
  baseUrl: string;
  mcpUrl: string;
  log: LogLines;
  /** The HTTP version of every request served so far (`1.1`, `2.0`), in order. */
  httpVersions: string[];
}

/**
 * Starts the real gateway with TLS on 127.0.0.1 (free port); its log lines (from `logLevel`, default
 * info) are kept for the test.
 */
export async function startTlsGateway(
  env: Record<string, string>,
  options: { logLevel?: string } = {},
): Promise<RunningTlsGateway> {
  const auditLog = join(mkdtempSync(join(tmpdir(), 'gateway-audit-')), 'audit.log');
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', AUDIT_LOG: auditLog, ...env });
  const log = logLines();
  const gateway = await buildApp(config, {
    logger: { level: options.logLevel ?? 'info', stream: log.stream },
  });
  const httpVersions: string[] = [];
  gateway.app.addHook('onRequest', async (request) => {
    httpVersions.push(request.raw.httpVersion);
  });
  await gateway.app.listen({ host: config.host, port: 0 });
  const { port } = gateway.app.server.address() as AddressInfo;
  const baseUrl = `https://localhost:${port}`;
  return {
    ...gateway,
    port,
    auditPath: auditLog,
    baseUrl,
    mcpUrl: `${baseUrl}${config.mcpPath}`,
    log,
    httpVersions,
  };
}
