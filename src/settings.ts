/**
 * Every setting the gateway reads from its environment (and, mirrored, its command line): the
 * schema that checks and coerces it, what it means, and what it accepts in words. `config.ts` turns
 * the checked values into the typed configuration.
 */
export const TOOL_TEXT_MODES = ['contract', 'json'] as const;
export type ToolTextMode = (typeof TOOL_TEXT_MODES)[number];

const integer = (minimum: number, maximum: number, fallback: number) => ({
  type: 'integer',
  minimum,
  maximum,
  default: fallback,
});
const text = { type: 'string', minLength: 1 };
/** RFC 6749 §3.3 scope-token characters. */
const scope = { type: 'string', pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,256}$' };
const claim = { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,64}$' };

/** One entry per environment variable; ajv coerces strings to the declared types and fills defaults. */
export const ENV_SCHEMA = {
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
    AUTH_READ_SCOPE: { ...scope, default: 'dagu.read' },
    AUTH_WORKBOOK_SCOPE: { ...scope, default: 'dagu.workbook' },
    AUTH_WORKSPACE_SCOPE_PREFIX: { ...scope, default: 'dagu.read:workspace/' },
    AUTH_REQUIRE_SCOPES: { enum: ['auto', 'always', 'never'], default: 'auto' },
    AUTH_JWT_IDENTITY_CLAIM: { ...claim, default: 'sub' },
    AUTH_JWT_ROLE_CLAIM: { ...claim, default: 'role' },
    AUTH_JWT_GROUPS_CLAIM: { ...claim, default: 'groups' },
    AUTH_GROUPS_FILE: text,
    AUTH_SERVER: { enum: ['none', 'builtin'], default: 'none' },
    OAUTH_UPSTREAM_ISSUER: { type: 'string', pattern: '^https?://[^?#\\s]+$' },
    OAUTH_UPSTREAM_CLIENT_ID: text,
    OAUTH_UPSTREAM_CLIENT_SECRET: text,
    OAUTH_UPSTREAM_SCOPES: { ...text, default: 'openid email profile' },
    OAUTH_ACCESS_TOKEN_TTL_S: integer(30, 3600, 300),
    OAUTH_REFRESH_TOKEN_TTL_S: integer(300, 90 * 86_400, 14 * 86_400),
    OAUTH_DYNAMIC_REGISTRATION: { type: 'boolean', default: true },
    OAUTH_CLIENT_ID_METADATA: { type: 'boolean', default: true },
    OAUTH_CLIENT_ID_HOSTS: text,
    OAUTH_CLIENT_ID_MAX_BYTES: integer(1024, 65_536, 16_384),
    OAUTH_CLIENT_ID_TIMEOUT_MS: integer(100, 10_000, 2_500),
    OAUTH_CLIENT_ID_CACHE_MAX_S: integer(30, 86_400, 3_600),
    OAUTH_CLIENT_ID_ALLOW_LOOPBACK: { type: 'boolean', default: false },
    OAUTH_CLIENT_ID_CA_FILE: text,
    OAUTH_STATE_DIR: { ...text, default: 'oauth-state' },
    OAUTH_CLIENTS_FILE: text,
    OAUTH_STATE_REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    OAUTH_SIGNING_KEY_ROTATE_S: integer(3600, 90 * 86_400, 7 * 86_400),
    OAUTH_RATE_LIMIT_PER_MINUTE: integer(10, 1_000_000, 300),
    ALLOWED_HOSTS: text,
    ALLOWED_ORIGINS: text,
    AUDIT_LOG: { ...text, default: 'stdout' },
    RATE_LIMIT_PER_MINUTE: integer(1, 1_000_000, 120),
    MAX_CONCURRENT_CALLS_PER_IDENTITY: integer(1, 10_000, 8),
    BODY_LIMIT_BYTES: integer(1024, 16 * 1024 * 1024, 64 * 1024),
    CALL_DEADLINE_MS: integer(100, 600_000, 30_000),
    HEADERS_TIMEOUT_MS: integer(100, 600_000, 10_000),
    BODY_TIMEOUT_MS: integer(100, 600_000, 10_000),
    // No default: CALL_DEADLINE_MS plus 5 s.
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 1_200_000 },
    DRAIN_MS: integer(0, 600_000, 5_000),
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
  AUTH_JWKS_URL: {
    help: "URL of a JSON Web Key Set for caller JWTs (unset with AUTH_JWT_ISSUER: read from the issuer's metadata)",
    allowed: 'an http:// or https:// URL',
  },
  AUTH_JWT_ISSUER: {
    help: 'accepted JWT `iss` values, comma-separated; alone (no other JWT setting), one issuer whose discovery document gives the JWKS URL at start',
  },
  AUTH_JWT_AUDIENCE: { help: 'accepted JWT `aud` values, comma-separated' },
  AUTH_READ_SCOPE: {
    help: 'OAuth scope a token needs to use the MCP endpoint',
    allowed: 'one OAuth scope token (printable ASCII, no space, quote or backslash)',
  },
  AUTH_WORKBOOK_SCOPE: {
    help: 'OAuth scope a token needs, besides the read scope, for the workbook target',
    allowed: 'one OAuth scope token (printable ASCII, no space, quote or backslash)',
  },
  AUTH_WORKSPACE_SCOPE_PREFIX: {
    help: 'prefix of per-workspace scopes: <prefix><name> limits a token to workspace <name>',
    allowed: 'one OAuth scope token (printable ASCII, no space, quote or backslash)',
  },
  AUTH_REQUIRE_SCOPES: {
    help: 'auto: tokens of an authorization server (public key, JWKS) need the read scope; always: every JWT; never',
  },
  AUTH_JWT_IDENTITY_CLAIM: {
    help: 'JWT claim that names the caller (sub, email, preferred_username, …)',
    allowed: 'a claim name of letters, digits, "_", ".", ":", "/" and "-"',
  },
  AUTH_JWT_ROLE_CLAIM: {
    help: "JWT claim holding one of Dagu's roles (absent in a token: viewer)",
    allowed: 'a claim name of letters, digits, "_", ".", ":", "/" and "-"',
  },
  AUTH_JWT_GROUPS_CLAIM: {
    help: "JWT claim listing the caller's groups, mapped by AUTH_GROUPS_FILE",
    allowed: 'a claim name of letters, digits, "_", ".", ":", "/" and "-"',
  },
  AUTH_GROUPS_FILE: {
    help: 'YAML or JSON file mapping token groups to a role and DAG/workspace globs (reloaded on change)',
  },
  AUTH_ALLOW_ANONYMOUS: {
    help: 'serve callers without credentials on a non-loopback address (not recommended)',
  },
  AUTH_SERVER: {
    help: 'builtin: this gateway is also the OAuth authorization server of its MCP endpoint, signing users in with OAUTH_UPSTREAM_ISSUER (needs PUBLIC_URL)',
  },
  OAUTH_UPSTREAM_ISSUER: {
    help: 'issuer of the OpenID Connect provider users sign in with (AUTH_SERVER=builtin); register <PUBLIC_URL>/oauth/callback there',
    allowed: 'an https:// URL (http:// only on a loopback address)',
  },
  OAUTH_UPSTREAM_CLIENT_ID: {
    help: "the gateway's client id at the upstream provider (AUTH_SERVER=builtin)",
  },
  OAUTH_UPSTREAM_CLIENT_SECRET: {
    help: "the gateway's client secret at the upstream provider (AUTH_SERVER=builtin)",
  },
  OAUTH_UPSTREAM_SCOPES: {
    help: 'scopes asked of the upstream provider, space-separated (must include openid)',
  },
  OAUTH_ACCESS_TOKEN_TTL_S: { help: 'lifetime of the access tokens the built-in server issues, in seconds' },
  OAUTH_REFRESH_TOKEN_TTL_S: { help: 'lifetime of its refresh tokens (rotated on every use), in seconds' },
  OAUTH_DYNAMIC_REGISTRATION: {
    help: 'accept RFC 7591 dynamic client registration (deprecated by the MCP revision 2026-07-28; kept for older hosts)',
  },
  OAUTH_CLIENT_ID_METADATA: { help: 'accept Client ID Metadata Documents (an https URL as client_id)' },
  OAUTH_CLIENT_ID_HOSTS: {
    help: 'host names whose Client ID Metadata Documents are fetched, comma-separated (unset: any public host)',
  },
  OAUTH_CLIENT_ID_MAX_BYTES: { help: 'largest Client ID Metadata Document read, in bytes' },
  OAUTH_CLIENT_ID_TIMEOUT_MS: { help: 'time a Client ID Metadata Document fetch may take, in milliseconds' },
  OAUTH_CLIENT_ID_CACHE_MAX_S: {
    help: 'longest a Client ID Metadata Document is cached (its Cache-Control max-age, capped), in seconds',
  },
  OAUTH_CLIENT_ID_ALLOW_LOOPBACK: {
    help: 'fetch Client ID Metadata Documents from loopback addresses (tests and local demos only)',
  },
  OAUTH_CLIENT_ID_CA_FILE: {
    help: 'PEM file of CA certificates trusted for Client ID Metadata Document fetches (unset: the system CAs)',
  },
  OAUTH_CLIENTS_FILE: {
    help: 'YAML or JSON file of clients registered ahead (client_id, redirect_uris, optional client_name, application_type, client_secret; reloaded on change)',
  },
  OAUTH_STATE_DIR: {
    help: "folder of the built-in server's embedded store (registrations, grants, refresh tokens, signing keys): keep it across restarts",
  },
  OAUTH_STATE_REDIS_URL: {
    help: "Redis holding the built-in server's state instead of OAUTH_STATE_DIR: set it when replicas run",
    allowed: 'a redis:// or rediss:// URL',
  },
  OAUTH_SIGNING_KEY_ROTATE_S: {
    help: 'how long one token-signing key signs, in seconds; the old key verifies until its tokens expire',
  },
  OAUTH_RATE_LIMIT_PER_MINUTE: {
    help: "requests to the built-in server's endpoints per minute per client address (discovery and keys not counted), counted by each process",
  },
  ALLOWED_HOSTS: { help: 'Host names served, comma-separated (DNS-rebinding protection)' },
  ALLOWED_ORIGINS: { help: "browser Origins accepted, comma-separated (PUBLIC_URL's own origin always is)" },
  AUDIT_LOG: { help: 'audit log: stdout, stderr, or a file (JSON lines, reopened on SIGHUP)' },
  RATE_LIMIT_PER_MINUTE: { help: 'tool calls and resource reads per minute per caller' },
  MAX_CONCURRENT_CALLS_PER_IDENTITY: { help: 'calls served at once per caller' },
  BODY_LIMIT_BYTES: { help: 'largest request body, in bytes' },
  CALL_DEADLINE_MS: { help: 'deadline of one tool call or resource read, in milliseconds' },
  HEADERS_TIMEOUT_MS: {
    help: "time a client has to send a request's headers, from its connection or the request's first byte (else 408 and closed); with TLS, also the time to finish the handshake",
  },
  BODY_TIMEOUT_MS: {
    help: 'time a client has, after the headers bound, to send the whole request body (else 408 and closed)',
  },
  REQUEST_TIMEOUT_MS: {
    help: 'longest time a request is served, in milliseconds (else 503 and closed; default CALL_DEADLINE_MS + 5000)',
  },
  DRAIN_MS: {
    help: 'after SIGTERM: time /readyz answers 503 while requests are still served, before the listener closes',
  },
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
export function allowedText(name: SettingName): string {
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
