import { isIP } from 'node:net';
import { Ajv } from 'ajv';
import type { AuthServerConfig } from './auth-server-config.ts';
import { type TracingConfig, tracingFromEnv } from './otel-settings.ts';
import { allowedText, ENV_SCHEMA, type SettingName, type ToolTextMode } from './settings.ts';

export type { AuthServerConfig } from './auth-server-config.ts';
export { TRACE_SAMPLERS, type TraceSampler, type TracingConfig, tracingFromEnv } from './otel-settings.ts';
export { TOOL_TEXT_MODES, type ToolTextMode } from './settings.ts';

/** The gateway's typed configuration, read once from the environment at start-up. */
export interface GatewayConfig {
  host: string;
  port: number;
  mcpPath: string;
  /** Public base URL (scheme://host[:port]) used in the protected-resource metadata; derived when unset. */
  publicUrl: string | undefined;
  /** Native TLS (HTTPS) from a PEM certificate chain and key, reloaded when the files change; unset: plain HTTP. */
  tls: { certFile: string; keyFile: string } | undefined;
  /**
   * Addresses and CIDR ranges of reverse proxies whose `X-Forwarded-For/-Proto/-Host` are believed
   * (Fastify's `trustProxy`); empty: forwarded headers are ignored.
   */
  trustProxy: string[];
  logLevel: string;
  dagu: {
    url: string;
    /** REST prefix below `url`: `auto` (found from Dagu's health routes), `/api/v1` for Dagu 2.x, `/api/v2` for 1.x. */
    apiBase: string;
    token: string | undefined;
    timeoutMs: number;
  };
  readiness: {
    /** Timeout of the probe of Dagu's health route (short and separate from reads, so `/readyz` never waits long). */
    probeTimeoutMs: number;
    /** Period of the background probe; 0 probes only when `/readyz` has no result yet and on observed outcomes. */
    probeIntervalMs: number;
  };
  auth: {
    apiKeysFile: string | undefined;
    jwtSecret: string | undefined;
    jwtPublicKey: string | undefined;
    jwksUrl: string | undefined;
    jwtIssuer: string | undefined;
    jwtAudience: string | undefined;
    allowAnonymous: boolean;
    /** OAuth scopes of this resource (absent: `dagu.read`, `dagu.workbook`, `dagu.read:workspace/`). */
    scopes?: { read: string; workbook: string; workspacePrefix: string };
    /** `auto`: tokens of an authorization server (public key, JWKS) must carry the read scope. */
    requireScopes?: 'auto' | 'always' | 'never';
    /** The token claims that name the caller, its role and its groups (absent: `sub`, `role`, `groups`). */
    claims?: { identity: string; role: string; groups: string };
    /** Group → role and allowlists for JWT callers (hot-reloaded); unset: Dagu's own claims decide. */
    groupsFile?: string | undefined;
  };
  allowedHosts: string[];
  allowedOrigins: string[];
  /** Loopback bind and ALLOWED_ORIGINS unset: `http://` origins on loopback hosts are accepted too. */
  loopbackOrigins: boolean;
  auditLog: string;
  limits: {
    rateLimitPerMinute: number;
    maxConcurrentCallsPerIdentity: number;
    bodyLimitBytes: number;
    callDeadlineMs: number;
  };
  /** Time bounds of HTTP requests, and the drain after SIGTERM (src/http/time-bounds.ts, src/http/drain.ts). */
  http: {
    headersTimeoutMs: number;
    /** Added to the headers bound: the whole request (headers and body) arrives within their sum. */
    bodyTimeoutMs: number;
    /** The longest a request is served, from its first byte until its answer is sent. */
    requestTimeoutMs: number;
    drainMs: number;
  };
  workbook: {
    roots: string[] | undefined;
    maxFileBytes: number;
    maxZipEntries: number;
    maxPartBytes: number;
    maxSheetBytes: number;
    maxSharedStrings: number;
    maxCellChars: number;
    maxColumns: number;
    deadlineMs: number;
    maxConcurrent: number;
    /** Most workers one caller (identity) holds at once: its share of the pool. */
    maxPerCaller: number;
    /** Most reads waiting for a worker; a caller may fill at most half of the queue. */
    queueMax: number;
    /** How long a read may wait for a worker before it is refused. */
    queueWaitMs: number;
    workerHeapMb: number;
    /** Hard ceiling on an encrypted workbook's key-derivation spinCount. */
    maxSpinCount: number;
  };
  /** `contract`: the contract's success text; `json`: the JSON of `data` after it, for hosts that read only `content`. */
  toolText: ToolTextMode;
  /** Redis URL of the rate-limit store shared by replicas; unset keeps the limit in this process. */
  rateLimitRedisUrl: string | undefined;
  cache: {
    /** Bytes the in-memory cache may hold, shared by all callers; 0 turns caching off. */
    maxBytes: number;
    /** How long any successful Dagu answer may be reused; 0 (default) caches only what cannot change. */
    ttlMs: number;
  };
  /** OpenTelemetry tracing from the standard `OTEL_*` variables; `undefined` (the default): off, nothing loaded. */
  tracing: TracingConfig | undefined;
  /** The built-in OAuth authorization server (AUTH_SERVER=builtin); undefined: off. */
  authServer: AuthServerConfig | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const validateEnv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false }).compile(
  ENV_SCHEMA,
);

/** REQUEST_TIMEOUT_MS by default: the call deadline, and time to answer after it. */
const REQUEST_TIMEOUT_MARGIN_MS = 5_000;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]', '::1'];

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** Named ranges Fastify's trustProxy (proxy-addr) understands. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An IP address, a CIDR range with a prefix its family allows, or a named range. */
export function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const list = (value: unknown): string[] | undefined =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
    : undefined;

/** The environment's values as the schema reads them: trimmed, blank ones left out. */
type EnvValues = Record<string, string | number | boolean | undefined>;

/** A reader of one kind of value, by setting name. */
interface Readers {
  str: (key: string) => string | undefined;
  num: (key: string) => number;
}

function readersOf(v: EnvValues): Readers {
  return {
    str: (key) => (typeof v[key] === 'string' ? (v[key] as string) : undefined),
    num: (key) => v[key] as number,
  };
}

/** Validates (coercing types, filling defaults in place); one line per setting the schema refuses. */
function schemaProblems(env: NodeJS.ProcessEnv, values: Record<string, unknown>): string[] {
  if (validateEnv(values)) return [];
  const invalid = new Set((validateEnv.errors ?? []).map((error) => error.instancePath.replace(/^\//, '')));
  return [...invalid].map((key) => {
    // A Redis URL may carry a password.
    const shown = /SECRET|TOKEN|KEY$|REDIS_URL$/.test(key) ? '' : ` (got ${JSON.stringify(env[key])})`;
    return `${key}: must be ${allowedText(key as SettingName)}${shown}`;
  });
}

/** Problems no single setting's schema can see: settings that exclude or need each other. */
function combinationProblems(v: EnvValues, trustProxy: string[], problems: string[]): void {
  const jwtModes = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL'].filter(
    (key) => v[key] !== undefined,
  );
  if (jwtModes.length > 1) problems.push(`${jwtModes.join(', ')}: set at most one JWT verification mode`);
  const issuer = typeof v.AUTH_JWT_ISSUER === 'string' ? v.AUTH_JWT_ISSUER : undefined;
  if (jwtModes.length === 0 && issuer !== undefined && !/^https?:\/\/[^\s,]+$/.test(issuer.trim())) {
    problems.push(
      'AUTH_JWT_ISSUER: without AUTH_JWKS_URL, AUTH_JWT_PUBLIC_KEY or AUTH_JWT_SECRET it must be one http:// ' +
        `or https:// URL, the issuer whose discovery document names the JWKS (got ${JSON.stringify(issuer)})`,
    );
  }
  if (v.AUTH_SERVER === 'builtin') builtinServerProblems(v, jwtModes, problems);
  const tlsFiles = ['TLS_CERT_FILE', 'TLS_KEY_FILE'] as const;
  const tlsGiven = tlsFiles.filter((key) => v[key] !== undefined);
  if (tlsGiven.length === 1) {
    const missing = tlsFiles.find((key) => v[key] === undefined)!;
    problems.push(`${missing}: must be set too when ${tlsGiven[0]} is set (HTTPS needs both files)`);
  }
  const badProxies = trustProxy.filter((entry) => !isProxyAddress(entry));
  if (badProxies.length > 0 && !problems.some((line) => line.startsWith('TRUST_PROXY:'))) {
    problems.push(
      `TRUST_PROXY: must be ${allowedText('TRUST_PROXY')} (got ${badProxies.map((entry) => JSON.stringify(entry)).join(', ')})`,
    );
  }
}

/** AUTH_SERVER=builtin issues and verifies its own tokens: it needs its issuer URL and an upstream. */
function builtinServerProblems(v: EnvValues, jwtModes: string[], problems: string[]): void {
  if (v.PUBLIC_URL === undefined)
    problems.push(
      'PUBLIC_URL: must be set with AUTH_SERVER=builtin (it is the issuer and the token audience)',
    );
  for (const key of ['OAUTH_UPSTREAM_ISSUER', 'OAUTH_UPSTREAM_CLIENT_ID', 'OAUTH_UPSTREAM_CLIENT_SECRET']) {
    if (v[key] === undefined) problems.push(`${key}: must be set with AUTH_SERVER=builtin`);
  }
  if (jwtModes.length > 0)
    problems.push(
      `${jwtModes.join(', ')}: not with AUTH_SERVER=builtin (it verifies the tokens it issues itself)`,
    );
  const issuer = typeof v.OAUTH_UPSTREAM_ISSUER === 'string' ? URL.parse(v.OAUTH_UPSTREAM_ISSUER) : null;
  if (issuer?.protocol === 'http:' && !isLoopbackHost(issuer.hostname))
    problems.push('OAUTH_UPSTREAM_ISSUER: must be an https:// URL (http:// only on a loopback address)');
  if (typeof v.OAUTH_UPSTREAM_SCOPES === 'string' && !v.OAUTH_UPSTREAM_SCOPES.split(' ').includes('openid'))
    problems.push('OAUTH_UPSTREAM_SCOPES: must include openid');
}

function authServerConfig(v: EnvValues, { str, num }: Readers): AuthServerConfig | undefined {
  if (v.AUTH_SERVER !== 'builtin') return undefined;
  return {
    upstream: {
      issuer: str('OAUTH_UPSTREAM_ISSUER')!,
      clientId: str('OAUTH_UPSTREAM_CLIENT_ID')!,
      clientSecret: str('OAUTH_UPSTREAM_CLIENT_SECRET')!,
      scopes: str('OAUTH_UPSTREAM_SCOPES')!,
    },
    accessTokenTtlS: num('OAUTH_ACCESS_TOKEN_TTL_S'),
    refreshTokenTtlS: num('OAUTH_REFRESH_TOKEN_TTL_S'),
    dynamicRegistration: v.OAUTH_DYNAMIC_REGISTRATION === true,
    clientsFile: str('OAUTH_CLIENTS_FILE'),
    state: { dir: str('OAUTH_STATE_DIR')!, redisUrl: str('OAUTH_STATE_REDIS_URL') },
    signingKeyRotateS: num('OAUTH_SIGNING_KEY_ROTATE_S'),
    ratePerMinute: num('OAUTH_RATE_LIMIT_PER_MINUTE'),
    clientIdMetadata: {
      enabled: v.OAUTH_CLIENT_ID_METADATA === true,
      hosts: list(v.OAUTH_CLIENT_ID_HOSTS)?.map((host) => host.toLowerCase()),
      maxBytes: num('OAUTH_CLIENT_ID_MAX_BYTES'),
      timeoutMs: num('OAUTH_CLIENT_ID_TIMEOUT_MS'),
      cacheMaxS: num('OAUTH_CLIENT_ID_CACHE_MAX_S'),
      allowLoopback: v.OAUTH_CLIENT_ID_ALLOW_LOOPBACK === true,
      caFile: str('OAUTH_CLIENT_ID_CA_FILE'),
    },
  };
}

function authConfig(v: EnvValues, { str }: Readers): GatewayConfig['auth'] {
  return {
    apiKeysFile: str('AUTH_API_KEYS_FILE'),
    jwtSecret: str('AUTH_JWT_SECRET'),
    jwtPublicKey: str('AUTH_JWT_PUBLIC_KEY'),
    jwksUrl: str('AUTH_JWKS_URL'),
    jwtIssuer: str('AUTH_JWT_ISSUER'),
    jwtAudience: str('AUTH_JWT_AUDIENCE'),
    allowAnonymous: v.AUTH_ALLOW_ANONYMOUS === true,
    scopes: {
      read: str('AUTH_READ_SCOPE')!,
      workbook: str('AUTH_WORKBOOK_SCOPE')!,
      workspacePrefix: str('AUTH_WORKSPACE_SCOPE_PREFIX')!,
    },
    requireScopes: str('AUTH_REQUIRE_SCOPES') as 'auto' | 'always' | 'never',
    claims: {
      identity: str('AUTH_JWT_IDENTITY_CLAIM')!,
      role: str('AUTH_JWT_ROLE_CLAIM')!,
      groups: str('AUTH_JWT_GROUPS_CLAIM')!,
    },
    groupsFile: str('AUTH_GROUPS_FILE'),
  };
}

function workbookConfig(v: EnvValues, { str, num }: Readers): GatewayConfig['workbook'] {
  const roots = str('WORKBOOK_ROOTS')
    ?.split(':')
    .map((root) => root.trim())
    .filter((root) => root.length > 0);
  return {
    roots: roots && roots.length > 0 ? roots : undefined,
    maxFileBytes: num('WORKBOOK_MAX_FILE_BYTES'),
    maxZipEntries: num('WORKBOOK_MAX_ZIP_ENTRIES'),
    maxPartBytes: num('WORKBOOK_MAX_PART_BYTES'),
    maxSheetBytes: num('WORKBOOK_MAX_SHEET_BYTES'),
    maxSharedStrings: num('WORKBOOK_MAX_SHARED_STRINGS'),
    maxCellChars: num('WORKBOOK_MAX_CELL_CHARS'),
    maxColumns: num('WORKBOOK_MAX_COLUMNS'),
    deadlineMs: num('WORKBOOK_DEADLINE_MS'),
    maxConcurrent: num('WORKBOOK_MAX_CONCURRENT'),
    maxPerCaller: Math.min(
      num('WORKBOOK_MAX_CONCURRENT'),
      (v.WORKBOOK_MAX_PER_CALLER as number | undefined) ??
        Math.max(1, Math.floor(num('WORKBOOK_MAX_CONCURRENT') / 2)),
    ),
    queueMax: num('WORKBOOK_QUEUE_MAX'),
    queueWaitMs: num('WORKBOOK_QUEUE_WAIT_MS'),
    workerHeapMb: num('WORKBOOK_WORKER_HEAP_MB'),
    maxSpinCount: num('WORKBOOK_MAX_SPIN_COUNT'),
  };
}

/** The HTTP server's limits and timeouts, and the transport security lists. */
function serverConfig(
  v: EnvValues,
  { str, num }: Readers,
): Pick<GatewayConfig, 'tls' | 'allowedHosts' | 'allowedOrigins' | 'loopbackOrigins' | 'limits' | 'http'> {
  return {
    tls:
      str('TLS_CERT_FILE') === undefined
        ? undefined
        : { certFile: str('TLS_CERT_FILE')!, keyFile: str('TLS_KEY_FILE')! },
    allowedHosts: list(v.ALLOWED_HOSTS) ?? LOOPBACK_NAMES,
    allowedOrigins: list(v.ALLOWED_ORIGINS) ?? [],
    loopbackOrigins: isLoopbackHost(str('HOST')!) && list(v.ALLOWED_ORIGINS) === undefined,
    limits: {
      rateLimitPerMinute: num('RATE_LIMIT_PER_MINUTE'),
      maxConcurrentCallsPerIdentity: num('MAX_CONCURRENT_CALLS_PER_IDENTITY'),
      bodyLimitBytes: num('BODY_LIMIT_BYTES'),
      callDeadlineMs: num('CALL_DEADLINE_MS'),
    },
    http: {
      headersTimeoutMs: num('HEADERS_TIMEOUT_MS'),
      bodyTimeoutMs: num('BODY_TIMEOUT_MS'),
      requestTimeoutMs:
        (v.REQUEST_TIMEOUT_MS as number | undefined) ?? num('CALL_DEADLINE_MS') + REQUEST_TIMEOUT_MARGIN_MS,
      drainMs: num('DRAIN_MS'),
    },
  };
}

/** Reads the configuration; throws ConfigError with one line per problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(ENV_SCHEMA.properties)) {
    const raw = env[key];
    if (raw !== undefined && raw.trim() !== '') values[key] = raw.trim();
  }
  const problems = schemaProblems(env, values);
  const v = values as EnvValues;
  const trustProxy = list(v.TRUST_PROXY) ?? [];
  combinationProblems(v, trustProxy, problems);
  const tracing = tracingFromEnv(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const readers = readersOf(v);
  const { str, num } = readers;
  return {
    host: str('HOST')!,
    port: num('PORT'),
    mcpPath: str('MCP_PATH')!,
    publicUrl: str('PUBLIC_URL'),
    trustProxy,
    logLevel: str('LOG_LEVEL')!,
    dagu: {
      url: str('DAGU_URL')!.replace(/\/+$/, ''),
      apiBase: str('DAGU_API_BASE')!,
      token: str('DAGU_API_TOKEN'),
      timeoutMs: num('DAGU_TIMEOUT_MS'),
    },
    readiness: {
      probeTimeoutMs: num('DAGU_PROBE_TIMEOUT_MS'),
      probeIntervalMs: num('DAGU_PROBE_INTERVAL_MS'),
    },
    auth: authConfig(v, readers),
    auditLog: str('AUDIT_LOG')!,
    ...serverConfig(v, readers),
    workbook: workbookConfig(v, readers),
    toolText: str('TOOL_TEXT') as ToolTextMode,
    rateLimitRedisUrl: str('RATE_LIMIT_REDIS_URL'),
    cache: { maxBytes: num('CACHE_MAX_BYTES'), ttlMs: num('CACHE_TTL_MS') },
    tracing,
    authServer: authServerConfig(v, readers),
  };
}
