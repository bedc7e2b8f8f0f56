/**
 * Fixture builders for the end-to-end auth tests (test/integration/auth): API key files, JWTs signed
 * with node:crypto alone (the tests do not trust the library they test), a gateway whose application
 * log is captured, a recording proxy in front of Dagu that can hold requests, raw HTTP helpers, and a
 * Prometheus text parser.
 */
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { nowSeconds, sha256Hex, signJwt } from './auth-helpers.ts';
import type { RunningGateway } from './gateway.ts';
import { tempDir } from './temp.ts';

export { nowSeconds, sha256Hex, signJwt };

// ---- temp files -------------------------------------------------------------------------------

export { tempDir };

/** Replaces a file atomically (write + rename), as editors and config managers do. */
export function replaceFile(path: string, text: string): void {
  const next = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(next, text);
  renameSync(next, path);
}

// ---- API keys ---------------------------------------------------------------------------------

/** A fresh random API key shaped like `npm run keygen`'s: `dmg_`, a label, 32 random base64url characters. */
export const newApiKey = (label = 'key'): string =>
  `dmg_${label.replace(/[^A-Za-z0-9]/g, '')}_${randomBytes(24).toString('base64url')}`;

export interface KeySpec {
  name: string;
  key: string;
  surfaces?: Array<'mcp' | 'rest_api'>;
  role?: 'viewer' | 'operator' | 'developer' | 'manager' | 'admin';
  dags?: string[];
  workspaces?: string[];
}

/** The YAML text of an AUTH_API_KEYS_FILE holding only SHA-256 hashes of the given keys. */
export function keysYaml(specs: readonly KeySpec[]): string {
  return stringify({
    keys: specs.map((spec) => ({
      name: spec.name,
      sha256: sha256Hex(spec.key),
      surfaces: spec.surfaces ?? ['mcp'],
      role: spec.role ?? 'viewer',
      ...(spec.dags ? { dags: spec.dags } : {}),
      ...(spec.workspaces ? { workspaces: spec.workspaces } : {}),
    })),
  });
}

/** Writes a keys file into a fresh temp dir and returns its path. */
export function writeKeysFile(specs: readonly KeySpec[], dir = tempDir()): string {
  const path = join(dir, 'keys.yaml');
  writeFileSync(path, keysYaml(specs));
  return path;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

// ---- JWTs -------------------------------------------------------------------------------------

/** A 40-character HS256 secret, different each run. */
export const newSecret = (): string => `secret-${randomBytes(24).toString('base64url')}`;

export const rsaKeys = (): { privateKey: KeyObject; publicKey: KeyObject; publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};

export const ecKeys = (): { privateKey: KeyObject; publicKey: KeyObject; publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};

/** Claims valid for ten minutes: `sub`, `iat`, `exp`, plus `extra` (which may override any of them). */
export function claims(sub: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return { sub, iat: now, exp: now + 600, ...extra };
}

export const hs256 = (payload: Record<string, unknown>, secret: string): string =>
  signJwt(payload, { alg: 'HS256', key: secret });

// ---- a gateway with a captured application log ------------------------------------------------

export interface CapturedGateway extends RunningGateway {
  auditFile: string;
  /** Every line the application logger (pino) wrote so far. */
  logText(): string;
  auditText(): string;
  auditLines(): Array<Record<string, unknown>>;
}

/**
 * Starts the real gateway (buildApp + listen on 127.0.0.1, on PORT or else a free port) like
 * test/support/gateway.ts, with the audit log in a temp file (unless AUDIT_LOG is given) and the
 * application log captured at `logLevel` (default `silent`: nothing is logged).
 */
export async function startCapturedGateway(
  env: Record<string, string>,
  options: { logLevel?: string } = {},
): Promise<CapturedGateway> {
  const ownDir = tempDir('gateway-audit-');
  const auditFile = env.AUDIT_LOG ?? join(ownDir, 'audit.log');
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', AUDIT_LOG: auditFile, ...env });
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const level = options.logLevel ?? 'silent';
  const logger = level === 'silent' ? (false as const) : { level, stream };
  const gateway = await buildApp(config, { logger });
  await gateway.app.listen({ host: config.host, port: config.port });
  const { port } = gateway.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const auditText = () => {
    try {
      return readFileSync(auditFile, 'utf8');
    } catch {
      return '';
    }
  };
  return {
    ...gateway,
    close: async () => {
      await gateway.close();
      rmSync(ownDir, { recursive: true, force: true });
    },
    baseUrl,
    auditPath: auditFile,
    mcpUrl: `${baseUrl}${config.mcpPath}`,
    auditFile,
    logText: () => chunks.join(''),
    auditText,
    auditLines: () =>
      auditText()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

// ---- raw HTTP ---------------------------------------------------------------------------------

/**
 * Raw requests name an initialize-era revision: the gateway serves such a `tools/call` statelessly
 * without the 2026-07-28 per-request envelope (`_meta` keys and `Mcp-Method` headers), so an accepted
 * credential gets 200 and the status alone tells what the auth layer decided.
 */
export const RAW_PROTOCOL = '2025-06-18';

/** A `tools/call` of dagu_read as one JSON-RPC message. */
export const toolCallBody = (args: unknown, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'dagu_read', arguments: args },
});

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json(): Record<string, unknown>;
}

/**
 * POSTs a JSON-RPC body (default: a tools/call of the reference list) to the MCP endpoint with plain
 * `fetch`. A header given as `undefined` is not sent (`'mcp-protocol-version': undefined` sends none).
 */
export async function postMcp(
  url: string,
  headers: Record<string, string | undefined> = {},
  body: unknown = toolCallBody({ target: 'references' }),
): Promise<RawResponse> {
  const sent: Record<string, string> = {};
  for (const [name, value] of Object.entries({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': RAW_PROTOCOL,
    ...headers,
  })) {
    if (value !== undefined) sent[name] = value;
  }
  const response = await fetch(url, { method: 'POST', headers: sent, body: JSON.stringify(body) });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text) as Record<string, unknown>,
  };
}

/** A request with node:http, for what `fetch` cannot send (a `Host` header of our choosing). */
export function rawHttp(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(parts).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

// ---- MCP client errors ------------------------------------------------------------------------

/**
 * The HTTP status an MCP client's rejection carries: the v2 SDK throws SdkHttpError (`status`, and the
 * body in `data.text`); the v1 SDK throws StreamableHTTPError (`code` = status, body in the message).
 */
export function httpFailure(error: unknown): { status: number | undefined; body: Record<string, unknown> } {
  const e = error as { status?: unknown; code?: unknown; data?: { text?: unknown }; message?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.code === 'number' ? e.code : undefined;
  const text =
    typeof e.data?.text === 'string'
      ? e.data.text
      : String(e.message ?? '').replace(/^Streamable HTTP error: Error POSTing to endpoint: /, '');
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: left empty
  }
  return { status, body };
}

// ---- a proxy in front of Dagu that records and can hold requests ------------------------------

export interface GatedProxy {
  url: string;
  /** Every request as it reached the proxy (method, raw URL, headers). */
  requests: Array<{ method: string; rawUrl: string; headers: IncomingHttpHeaders }>;
  /** From now on, requests wait until release() before they are forwarded. */
  hold(): void;
  /** Forwards the held requests and stops holding. */
  release(): void;
  /** Resolves once `count` requests are being held. */
  held(count?: number): Promise<void>;
  close(): Promise<void>;
}

/** A recording proxy to `target` (the real Dagu) that can hold requests, to keep a tool call in flight. */
export async function startGatedProxy(target: string): Promise<GatedProxy> {
  const origin = new URL(target);
  const requests: GatedProxy['requests'] = [];
  let holding = false;
  let waiting: Array<() => void> = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', rawUrl: req.url ?? '', headers: req.headers });
    const forward = () => {
      const out = httpRequest(
        {
          host: origin.hostname,
          port: origin.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: origin.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (holding) waiting.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      const queued = waiting;
      waiting = [];
      for (const forward of queued) forward();
    },
    held: async (count = 1) => {
      const end = Date.now() + 5000;
      while (waiting.length < count) {
        if (Date.now() > end) throw new Error(`no ${count} held request(s) within 5 s`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Requests that reached Dagu through the proxy for reads: the background readiness probe is not one. */
export const readsThrough = (proxy: GatedProxy, apiBase: string): number =>
  proxy.requests.filter((request) => request.rawUrl.split('?')[0] !== `${apiBase}/health`).length;

// ---- Prometheus text --------------------------------------------------------------------------

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition format (enough of it for prom-client's output). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_all, char: string) => (char === 'n' ? '\n' : char));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function metricSum(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

export async function scrape(baseUrl: string): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  return { text, samples: parseMetrics(text) };
}
