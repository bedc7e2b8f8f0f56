/**
 * An app of the auth and call-metering plugins alone (no MCP, no Dagu): its route answers who called
 * and what they may read. The unit tests of auth/authentication, auth/authenticate and http/call-metering
 * drive it with inject.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { type AuditLog, createAuditLog } from '../../src/audit/audit-log.ts';
import { type AuthenticatorConfig, createAuthenticator } from '../../src/auth/authenticate.ts';
import { authenticationPlugin, meteredCaller } from '../../src/auth/authentication.ts';
import { accessPolicyFor } from '../../src/auth/identity.ts';
import { callMeteringPlugin } from '../../src/http/call-metering.ts';
import { hostOriginPlugin } from '../../src/http/security.ts';
import { createMetrics, type GatewayMetrics } from '../../src/metrics/metrics.ts';
import { type RecordedLog, recordingLog, sha256Hex, tempDir } from './auth-helpers.ts';

export const SECRET = 'dagu-token-secret-0123456789abcdef0123456789';
export const VIEWER_KEY = 'dmg_viewer_0123456789abcdefghijklmnopqrstuvwx';
export const PLAIN_KEY = 'dmg_plain_0123456789abcdefghijklmnopqrstuvwxy';
export const REST_KEY = 'dmg_rest_0123456789abcdefghijklmnopqrstuvwxyz';
export const BODY_LIMIT = 1024;

export const KEYS_YAML = `keys:
  - name: ci-viewer
    sha256: ${sha256Hex(VIEWER_KEY)}
    surfaces: [mcp]
    role: viewer
    dags: ["etl-*"]
  - name: dev-plain
    key: ${PLAIN_KEY}
    surfaces: [mcp, rest_api]
    role: developer
  - name: rest-only
    sha256: ${sha256Hex(REST_KEY)}
    surfaces: [rest_api]
    role: admin
`;

export const noAuth: AuthenticatorConfig['auth'] = {
  apiKeysFile: undefined,
  jwtSecret: undefined,
  jwtPublicKey: undefined,
  jwksUrl: undefined,
  jwtIssuer: undefined,
  jwtAudience: undefined,
  allowAnonymous: false,
};

export interface Harness {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  audit: AuditLog;
  auditFile: string;
  log: RecordedLog;
  /** Resolves the pending handlers (for the concurrency test). */
  release(): void;
  /** Resolves once `count` handlers are held (for the concurrency test). */
  held(count: number): Promise<void>;
  auditLines(): Array<Record<string, unknown>>;
}

export async function harness(
  auth: Partial<AuthenticatorConfig['auth']>,
  options: {
    host?: string;
    publicUrl?: string;
    limits?: { ratePerMinute: number; maxConcurrent: number };
    hold?: boolean;
  } = {},
): Promise<Harness> {
  const dir = tempDir();
  const log = recordingLog();
  const metrics = createMetrics({ defaultMetrics: false });
  const auditFile = join(dir, 'audit.log');
  const audit = createAuditLog(auditFile, { metrics, log, signals: false });
  const authenticator = await createAuthenticator(
    {
      host: options.host ?? '127.0.0.1',
      auth: { ...noAuth, ...auth },
      ...(options.publicUrl ? { publicUrl: options.publicUrl, mcpPath: '/mcp' } : {}),
    },
    log,
    { keys: { watch: false, signals: false } },
  );
  let waiting: Array<() => void> = [];
  let onHeld = () => {};
  const app = Fastify({ bodyLimit: BODY_LIMIT });
  await app.register(hostOriginPlugin, {
    allowedHosts: ['localhost', '127.0.0.1'],
    allowedOrigins: [],
    audit,
  });
  await app.register(authenticationPlugin, {
    authenticator,
    mcpPath: '/mcp',
    publicUrl: options.publicUrl,
    metrics,
    audit,
  });
  if (options.limits) {
    await app.register(callMeteringPlugin, {
      ...options.limits,
      caller: meteredCaller,
      log,
      metrics,
      audit,
    });
  }
  app.post(
    '/mcp',
    {
      onRequest: [app.authenticate],
      preHandler: [app.checkCallScopes, ...(options.limits ? [app.meterCalls] : [])],
    },
    async (request) => {
      if (options.hold)
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          onHeld();
        });
      const identity = request.identity!;
      const access = accessPolicyFor(identity);
      return {
        identity,
        etl: access.canReadDag('etl-nightly'),
        ops: access.canReadWorkspace('ops'),
        dev: access.canReadWorkspace('dev'),
        workbooks: access.readsWorkbooks,
      };
    },
  );
  // The authentication plugin closes the authenticator with the app.
  app.addHook('onClose', async () => audit.close());
  return {
    app,
    metrics,
    audit,
    auditFile,
    log,
    release() {
      for (const resolve of waiting) resolve();
      waiting = [];
    },
    held: (count) =>
      new Promise<void>((resolve) => {
        onHeld = () => {
          if (waiting.length >= count) resolve();
        };
        onHeld();
      }),
    auditLines: () =>
      readFileSync(auditFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export const toolCall = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'dagu_read', arguments: {} },
};
export const call = (app: FastifyInstance, authorization?: string, body: unknown = toolCall, url = '/mcp') =>
  app.inject({
    method: 'POST',
    url,
    headers: authorization === undefined ? {} : { authorization },
    payload: body as Record<string, unknown>,
  });

export async function metricValue(
  metrics: GatewayMetrics,
  name: string,
  labels: Record<string, string> = {},
) {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((family) => family.name === name);
  const values = (metric?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number }>;
  return values.find((value) => Object.entries(labels).every(([key, label]) => value.labels[key] === label))
    ?.value;
}
