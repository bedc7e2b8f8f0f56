import { isIP } from 'node:net';
import { Ajv } from 'ajv';

/** The gateway's typed configuration (design §4), read once from the environment at start-up. */
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
}

export const TOOL_TEXT_MODES = ['contract', 'json'] as const;
export type ToolTextMode = (typeof TOOL_TEXT_MODES)[number];

const integer = (minimum: number, maximum: number, fallback: number) => ({
  type: 'integer',
  minimum,
  maximum,
  default: fallback,
});
const text = { type: 'string', minLength: 1 };

/** One entry per environment variable; ajv coerces strings to the declared types and fills defaults. */
const ENV_SCHEMA = {
  type: 'object',
  properties: {
    HOST: { ...text, default: '127.0.0.1' },
    PORT: integer(0, 65535, 8090),
    MCP_PATH: { type: 'string', pattern: '^/[A-Za-z0-9/_.-]*$', default: '/mcp' },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    TLS_CERT_FILE: text,
    TLS_KEY_FILE: text,
    TRUST_PROXY: text,
    LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    DAGU_URL: { type: 'string', pattern: '^https?://[^?#]+$', default: 'http://127.0.0.1:8080' },
    DAGU_API_BASE: { type: 'string', pattern: '^(auto|/[A-Za-z0-9/_.-]*[^/])$', default: 'auto' },
    DAGU_API_TOKEN: text,
    DAGU_TIMEOUT_MS: integer(100, 600_000, 10_000),
    DAGU_PROBE_TIMEOUT_MS: integer(50, 900, 750),
    DAGU_PROBE_INTERVAL_MS: integer(0, 3_600_000, 5_000),
    AUTH_API_KEYS_FILE: text,
    AUTH_JWT_SECRET: { type: 'string', minLength: 32 },
    AUTH_JWT_PUBLIC_KEY: text,
    AUTH_JWKS_URL: { type: 'string', pattern: '^https?://' },
    AUTH_JWT_ISSUER: text,
    AUTH_JWT_AUDIENCE: text,
    AUTH_ALLOW_ANONYMOUS: { type: 'boolean', default: false },
    ALLOWED_HOSTS: text,
    ALLOWED_ORIGINS: text,
    AUDIT_LOG: { ...text, default: 'stdout' },
    RATE_LIMIT_PER_MINUTE: integer(1, 1_000_000, 120),
    MAX_CONCURRENT_CALLS_PER_IDENTITY: integer(1, 10_000, 8),
    BODY_LIMIT_BYTES: integer(1024, 16 * 1024 * 1024, 64 * 1024),
    CALL_DEADLINE_MS: integer(100, 600_000, 30_000),
    WORKBOOK_ROOTS: text,
    WORKBOOK_MAX_FILE_BYTES: integer(1, 2 ** 31, 50 * 1024 * 1024),
    WORKBOOK_MAX_ZIP_ENTRIES: integer(1, 1_000_000, 10_000),
    WORKBOOK_MAX_PART_BYTES: integer(1, 2 ** 31, 128 * 1024 * 1024),
    WORKBOOK_MAX_SHEET_BYTES: integer(1, 2 ** 40, 1024 * 1024 * 1024),
    WORKBOOK_MAX_SHARED_STRINGS: integer(1, 100_000_000, 2_000_000),
    WORKBOOK_MAX_CELL_CHARS: integer(1, 1_000_000, 32_767),
    WORKBOOK_MAX_COLUMNS: integer(1, 16_384, 512),
    WORKBOOK_DEADLINE_MS: integer(100, 600_000, 20_000),
    WORKBOOK_MAX_CONCURRENT: integer(1, 64, 2),
    // No default: half of WORKBOOK_MAX_CONCURRENT, at least one.
    WORKBOOK_MAX_PER_CALLER: { type: 'integer', minimum: 1, maximum: 64 },
    WORKBOOK_QUEUE_MAX: integer(1, 10_000, 32),
    WORKBOOK_QUEUE_WAIT_MS: integer(0, 600_000, 10_000),
    WORKBOOK_WORKER_HEAP_MB: integer(64, 16_384, 768),
    TOOL_TEXT: { enum: TOOL_TEXT_MODES, default: 'contract' },
    RATE_LIMIT_REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    // Excel and LibreOffice write 100,000; MS-OFFCRYPTO allows up to 10,000,000.
    WORKBOOK_MAX_SPIN_COUNT: integer(1, 10_000_000, 1_000_000),
    CACHE_MAX_BYTES: integer(0, 2 ** 34, 32 * 1024 * 1024),
    CACHE_TTL_MS: integer(0, 3_600_000, 0),
  },
} as const;

export type SettingName = keyof typeof ENV_SCHEMA.properties;

interface SettingText {
  /** One line for `--help`. */
  help: string;
  /** What a `pattern` allows, in words: config errors never show a regular expression. */
  allowed?: string;
}

/** What each setting means; the compiler insists on an entry for every setting. */
const SETTING_TEXT = {
  HOST: { help: 'listen address; anonymous access needs a loopback address' },
  PORT: { help: 'listen port (0 picks a free one)' },
  MCP_PATH: {
    help: 'path of the MCP endpoint',
    allowed: 'a path starting with "/" made of letters, digits, "/", "_", "." and "-"',
  },
  PUBLIC_URL: {
    help: 'public base URL for the OAuth protected-resource metadata (derived from the request when unset)',
    allowed: 'an http:// or https:// origin without a path, query or fragment (https://mcp.example.com)',
  },
  TLS_CERT_FILE: {
    help: 'PEM certificate chain for HTTPS (with TLS_KEY_FILE; reloaded when the file changes)',
  },
  TLS_KEY_FILE: { help: 'PEM private key for HTTPS (with TLS_CERT_FILE; reloaded when the file changes)' },
  TRUST_PROXY: {
    help: 'reverse proxies whose X-Forwarded-* headers are believed, comma-separated (unset: none)',
    allowed:
      'IP addresses or CIDR ranges (10.0.0.0/8, ::1/128) or loopback, linklocal, uniquelocal, comma-separated',
  },
  LOG_LEVEL: { help: 'application log level (JSON lines)' },
  DAGU_URL: {
    help: 'Dagu base URL',
    allowed: 'an http:// or https:// URL without a query or fragment',
  },
  DAGU_API_BASE: {
    help: "Dagu REST prefix: auto (found from Dagu's health routes), /api/v1 for Dagu 2.x, /api/v2 for Dagu 1.x",
    allowed:
      'auto, or a path starting with "/" made of letters, digits, "/", "_", "." and "-", not ending in "/"',
  },
  DAGU_API_TOKEN: { help: "the gateway's own bearer credential for Dagu (never a caller's)" },
  DAGU_TIMEOUT_MS: { help: 'timeout of each upstream call to Dagu, in milliseconds' },
  DAGU_PROBE_TIMEOUT_MS: { help: "timeout of the readiness probe of Dagu's health route, in milliseconds" },
  DAGU_PROBE_INTERVAL_MS: {
    help: 'period of the background readiness probe, in milliseconds (0: probe only when asked)',
  },
  AUTH_API_KEYS_FILE: { help: 'YAML or JSON file of API keys (SHA-256 hashes; `npm run keygen`)' },
  AUTH_JWT_SECRET: { help: 'HS256 shared secret for caller JWTs' },
  AUTH_JWT_PUBLIC_KEY: { help: 'RS256/ES256 public key for caller JWTs: PEM text or a PEM file path' },
  AUTH_JWKS_URL: { help: 'URL of a JSON Web Key Set for caller JWTs', allowed: 'an http:// or https:// URL' },
  AUTH_JWT_ISSUER: { help: 'accepted JWT `iss` values, comma-separated' },
  AUTH_JWT_AUDIENCE: { help: 'accepted JWT `aud` values, comma-separated' },
  AUTH_ALLOW_ANONYMOUS: {
    help: 'serve callers without credentials on a non-loopback address (not recommended)',
  },
  ALLOWED_HOSTS: { help: 'Host names served, comma-separated (DNS-rebinding protection)' },
  ALLOWED_ORIGINS: { help: 'browser Origins accepted, comma-separated' },
  AUDIT_LOG: { help: 'audit log: stdout, stderr, or a file (JSON lines, reopened on SIGHUP)' },
  RATE_LIMIT_PER_MINUTE: { help: 'tool calls and resource reads per minute per caller' },
  MAX_CONCURRENT_CALLS_PER_IDENTITY: { help: 'calls served at once per caller' },
  BODY_LIMIT_BYTES: { help: 'largest request body, in bytes' },
  CALL_DEADLINE_MS: { help: 'deadline of one tool call or resource read, in milliseconds' },
  WORKBOOK_ROOTS: {
    help: "':'-separated folders workbook reads are confined to (unset: workbook reads are off)",
  },
  WORKBOOK_MAX_FILE_BYTES: { help: 'largest workbook file, in bytes' },
  WORKBOOK_MAX_ZIP_ENTRIES: { help: 'most entries in a workbook zip' },
  WORKBOOK_MAX_PART_BYTES: { help: 'largest uncompressed workbook part, in bytes' },
  WORKBOOK_MAX_SHEET_BYTES: { help: 'largest uncompressed sheet, in bytes' },
  WORKBOOK_MAX_SHARED_STRINGS: { help: 'most shared strings in a workbook' },
  WORKBOOK_MAX_CELL_CHARS: { help: 'longest cell text read, in characters' },
  WORKBOOK_MAX_COLUMNS: { help: 'most columns profiled per sheet' },
  WORKBOOK_DEADLINE_MS: { help: 'deadline of one workbook read, in milliseconds' },
  WORKBOOK_MAX_CONCURRENT: { help: 'workbook reads (worker threads) at once' },
  WORKBOOK_MAX_PER_CALLER: { help: 'workbook workers one caller holds at once (default: half, at least 1)' },
  WORKBOOK_QUEUE_MAX: { help: 'workbook reads waiting for a worker (one caller fills at most half)' },
  WORKBOOK_QUEUE_WAIT_MS: { help: 'longest wait of a workbook read for a worker, in milliseconds' },
  WORKBOOK_WORKER_HEAP_MB: { help: 'heap limit of a workbook worker, in MB' },
  WORKBOOK_MAX_SPIN_COUNT: { help: 'highest key-derivation spinCount of an encrypted workbook read' },
  TOOL_TEXT: {
    help: "tool result text: contract (the contract's success text) or json (adds the JSON of data)",
  },
  RATE_LIMIT_REDIS_URL: {
    help: 'Redis shared by replicas for the rate limit (unset: each process limits alone)',
    allowed: 'a redis:// or rediss:// URL',
  },
  CACHE_MAX_BYTES: {
    help: 'bytes of the in-memory cache shared by all callers (finished step logs; 0 turns caching off)',
  },
  CACHE_TTL_MS: {
    help: 'reuse any successful Dagu answer for this long, in milliseconds (0: cache only what cannot change)',
  },
} satisfies Record<SettingName, SettingText>;

type SettingSchema = {
  type?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  default?: unknown;
};

/** What a setting accepts, in words, from its schema (and the words given for its pattern). */
function allowedText(name: SettingName): string {
  const schema: SettingSchema = ENV_SCHEMA.properties[name];
  const text: SettingText = SETTING_TEXT[name];
  if (schema.enum) return `one of ${schema.enum.join(', ')}`;
  if (schema.type === 'integer') return `a whole number from ${schema.minimum} to ${schema.maximum}`;
  if (schema.type === 'boolean') return 'true or false';
  if (text.allowed) return text.allowed;
  if (schema.minLength !== undefined && schema.minLength > 1)
    return `at least ${schema.minLength} characters`;
  return 'a non-empty value';
}

/** Every setting for the command line and `--help`: its variable, its flag, what it means, its default. */
export interface Setting {
  name: SettingName;
  /** `--dagu-url` for `DAGU_URL`. */
  flag: string;
  help: string;
  allowed: string;
  default: string | undefined;
}

export const SETTINGS: readonly Setting[] = (Object.keys(ENV_SCHEMA.properties) as SettingName[]).map(
  (name) => {
    const schema: SettingSchema = ENV_SCHEMA.properties[name];
    return {
      name,
      flag: `--${name.toLowerCase().replaceAll('_', '-')}`,
      help: SETTING_TEXT[name].help,
      allowed: allowedText(name),
      default: schema.default === undefined ? undefined : String(schema.default),
    };
  },
);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const validateEnv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false }).compile(
  ENV_SCHEMA,
);

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

/** Reads the configuration; throws ConfigError with one line per problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(ENV_SCHEMA.properties)) {
    const raw = env[key];
    if (raw !== undefined && raw.trim() !== '') values[key] = raw.trim();
  }
  const problems: string[] = [];
  if (!validateEnv(values)) {
    const invalid = new Set((validateEnv.errors ?? []).map((error) => error.instancePath.replace(/^\//, '')));
    for (const key of invalid) {
      // A Redis URL may carry a password.
      const shown = /SECRET|TOKEN|KEY$|REDIS_URL$/.test(key) ? '' : ` (got ${JSON.stringify(env[key])})`;
      problems.push(`${key}: must be ${allowedText(key as SettingName)}${shown}`);
    }
  }
  const v = values as Record<string, string | number | boolean | undefined>;
  const str = (key: string) => (typeof v[key] === 'string' ? (v[key] as string) : undefined);
  const num = (key: string) => v[key] as number;

  const jwtModes = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL'].filter(
    (key) => v[key] !== undefined,
  );
  if (jwtModes.length > 1) problems.push(`${jwtModes.join(', ')}: set at most one JWT verification mode`);
  const tlsFiles = ['TLS_CERT_FILE', 'TLS_KEY_FILE'] as const;
  const tlsGiven = tlsFiles.filter((key) => v[key] !== undefined);
  if (tlsGiven.length === 1) {
    const missing = tlsFiles.find((key) => v[key] === undefined)!;
    problems.push(`${missing}: must be set too when ${tlsGiven[0]} is set (HTTPS needs both files)`);
  }
  const trustProxy = list(v.TRUST_PROXY) ?? [];
  const badProxies = trustProxy.filter((entry) => !isProxyAddress(entry));
  if (badProxies.length > 0 && !problems.some((line) => line.startsWith('TRUST_PROXY:'))) {
    problems.push(
      `TRUST_PROXY: must be ${allowedText('TRUST_PROXY')} (got ${badProxies.map((entry) => JSON.stringify(entry)).join(', ')})`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const host = str('HOST')!;
  const workbookRoots = str('WORKBOOK_ROOTS')
    ?.split(':')
    .map((root) => root.trim())
    .filter((root) => root.length > 0);
  return {
    host,
    port: num('PORT'),
    mcpPath: str('MCP_PATH')!,
    publicUrl: str('PUBLIC_URL'),
    tls:
      str('TLS_CERT_FILE') === undefined
        ? undefined
        : { certFile: str('TLS_CERT_FILE')!, keyFile: str('TLS_KEY_FILE')! },
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
    auth: {
      apiKeysFile: str('AUTH_API_KEYS_FILE'),
      jwtSecret: str('AUTH_JWT_SECRET'),
      jwtPublicKey: str('AUTH_JWT_PUBLIC_KEY'),
      jwksUrl: str('AUTH_JWKS_URL'),
      jwtIssuer: str('AUTH_JWT_ISSUER'),
      jwtAudience: str('AUTH_JWT_AUDIENCE'),
      allowAnonymous: v.AUTH_ALLOW_ANONYMOUS === true,
    },
    allowedHosts: list(v.ALLOWED_HOSTS) ?? LOOPBACK_NAMES,
    allowedOrigins: list(v.ALLOWED_ORIGINS) ?? [],
    loopbackOrigins: isLoopbackHost(host) && list(v.ALLOWED_ORIGINS) === undefined,
    auditLog: str('AUDIT_LOG')!,
    limits: {
      rateLimitPerMinute: num('RATE_LIMIT_PER_MINUTE'),
      maxConcurrentCallsPerIdentity: num('MAX_CONCURRENT_CALLS_PER_IDENTITY'),
      bodyLimitBytes: num('BODY_LIMIT_BYTES'),
      callDeadlineMs: num('CALL_DEADLINE_MS'),
    },
    workbook: {
      roots: workbookRoots && workbookRoots.length > 0 ? workbookRoots : undefined,
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
    },
    toolText: str('TOOL_TEXT') as ToolTextMode,
    rateLimitRedisUrl: str('RATE_LIMIT_REDIS_URL'),
    cache: { maxBytes: num('CACHE_MAX_BYTES'), ttlMs: num('CACHE_TTL_MS') },
  };
}
