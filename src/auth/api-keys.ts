import { hash, timingSafeEqual } from 'node:crypto';
import { Ajv, type ErrorObject } from 'ajv';
import { type Identity, ROLES } from './identity.ts';
import {
  ConfigFileError,
  type FileKind,
  parseDocument,
  type ReloadTrigger,
  type WatchedFileOptions,
  watchConfigFile,
} from './watched-file.ts';

/** Where a key may be used. The gateway serves only `mcp`; `rest_api` mirrors Dagu's key surfaces. */
export const SURFACES = ['mcp', 'rest_api'] as const;
export type Surface = (typeof SURFACES)[number];

export interface ApiKeyEntry {
  readonly identity: Identity;
  readonly surfaces: readonly Surface[];
  /** SHA-256 of the key (32 bytes). The key itself is never kept. */
  readonly hash: Buffer;
  /** True when the file held the key in plaintext (`key:`) rather than its hash. */
  readonly plaintext: boolean;
}

export interface ParsedApiKeys {
  entries: ApiKeyEntry[];
  warnings: string[];
}

/** The API key file's problems, one line each (never a line of the file: it may hold a key). */
export class ApiKeysFileError extends ConfigFileError {
  constructor(file: string, problems: string[]) {
    super(file, problems, 'API key file');
    this.name = 'ApiKeysFileError';
  }
}

// The one-shot hash: no Hash object per presented key (about half the time of createHash's chain).
export const sha256 = (text: string): Buffer => hash('sha256', text, 'buffer');

/** Keys are sent as `Authorization: Bearer <key>`: token68 characters, and no `.` so they never look like a JWT. */
const KEY_PATTERN = '^[A-Za-z0-9_~+/-]+=*$';
const GLOBS = { type: 'array', minItems: 1, items: { type: 'string', minLength: 1, maxLength: 256 } };

const FILE_SCHEMA = {
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'surfaces', 'role'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$' },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          key: { type: 'string', minLength: 16, maxLength: 1024, pattern: KEY_PATTERN },
          surfaces: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: SURFACES } },
          role: { enum: ROLES },
          dags: GLOBS,
          workspaces: GLOBS,
        },
      },
    },
  },
} as const;

interface RawEntry {
  name: string;
  sha256?: string;
  key?: string;
  surfaces: Surface[];
  role: Identity['role'];
  dags?: string[];
  workspaces?: string[];
}

const validateFile = new Ajv({ allErrors: true, strict: true }).compile<{ keys: RawEntry[] }>(FILE_SCHEMA);

const FIELD_HINTS: Record<string, string> = {
  name: 'must be 1-128 characters: letters, digits and . _ @ : - (starting with a letter or digit)',
  sha256: 'must be the lowercase hex SHA-256 of the key (64 characters 0-9 a-f); `npm run keygen` prints one',
  key: 'must be at least 16 characters of A-Z a-z 0-9 - _ ~ + / (no dots), as sent in `Authorization: Bearer`',
};

/** One readable line per schema problem; never echoes a `key` or `sha256` value. */
function describe(error: ErrorObject, data: unknown): string {
  const segments = error.instancePath.split('/').slice(1);
  const where = segments
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('')
    .replace(/^\./, '');
  const index = segments[0] === 'keys' && segments[1] !== undefined ? Number(segments[1]) : undefined;
  const entry =
    index === undefined
      ? undefined
      : (data as { keys?: Array<{ name?: unknown }> } | undefined)?.keys?.[index];
  const label = typeof entry?.name === 'string' ? ` (key "${entry.name}")` : '';
  const field = segments.at(-1) ?? '';
  const path = where === '' ? 'file' : where;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path}${label}: unknown field "${String(error.params.additionalProperty)}"`;
    case 'required':
      return `${path}${label}: missing field "${String(error.params.missingProperty)}"`;
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).join(', ');
      const got = segments.reduce<unknown>(
        (value, segment) => (value as Record<string, unknown> | undefined)?.[segment],
        data,
      );
      const noun = field === 'role' ? 'unknown role' : 'unknown value';
      return `${path}${label}: ${noun} ${JSON.stringify(got)}; allowed: ${allowed}`;
    }
    case 'pattern':
    case 'minLength':
    case 'maxLength':
      return `${path}${label}: ${FIELD_HINTS[field] ?? error.message ?? 'is invalid'}`;
    case 'minItems':
      return `${path}${label}: must list at least one entry (omit the field to allow everything)`;
    default:
      return `${path}${label}: ${error.message ?? 'is invalid'}`;
  }
}

/** Validates an API key file's text (YAML, or JSON for `.json`). Throws ApiKeysFileError listing every problem. */
export function parseApiKeys(text: string, file: string): ParsedApiKeys {
  let data: unknown;
  try {
    data = parseDocument(text, file, 'API key file');
  } catch (error) {
    throw new ApiKeysFileError(file, (error as ConfigFileError).problems);
  }
  if (!validateFile(data)) {
    const problems = (validateFile.errors ?? []).map((error) => describe(error, data));
    throw new ApiKeysFileError(file, [...new Set(problems)]);
  }
  const problems: string[] = [];
  const warnings: string[] = [];
  const names = new Map<string, number>();
  const hashes = new Map<string, number>();
  const entries: ApiKeyEntry[] = [];
  data.keys.forEach((raw, index) => {
    const at = `keys[${index}] (key "${raw.name}")`;
    if ((raw.sha256 === undefined) === (raw.key === undefined)) {
      problems.push(`${at}: give exactly one of "sha256" (recommended) or "key"`);
      return;
    }
    const hash = raw.sha256 !== undefined ? Buffer.from(raw.sha256, 'hex') : sha256(raw.key!);
    const sameName = names.get(raw.name);
    if (sameName !== undefined) problems.push(`${at}: the name is already used by keys[${sameName}]`);
    else names.set(raw.name, index);
    const sameKey = hashes.get(hash.toString('hex'));
    if (sameKey !== undefined) problems.push(`${at}: the same key is already listed as keys[${sameKey}]`);
    else hashes.set(hash.toString('hex'), index);
    if (raw.key !== undefined) {
      warnings.push(
        `API key "${raw.name}" is stored in plaintext in ${file}; store its sha256 instead (npm run keygen prints both)`,
      );
    }
    const identity: Identity = Object.freeze({
      kind: 'api_key',
      id: raw.name,
      name: raw.name,
      role: raw.role,
      ...(raw.dags === undefined ? {} : { dags: Object.freeze([...raw.dags]) }),
      ...(raw.workspaces === undefined ? {} : { workspaces: Object.freeze([...raw.workspaces]) }),
    });
    entries.push(
      Object.freeze({
        identity,
        surfaces: Object.freeze([...raw.surfaces]),
        hash,
        plaintext: raw.key !== undefined,
      }),
    );
  });
  if (problems.length > 0) throw new ApiKeysFileError(file, problems);
  if (entries.length === 0) warnings.push(`${file} lists no keys: every API key will be refused`);
  return { entries, warnings };
}

/**
 * Finds the entry whose hash equals SHA-256(key). Every entry is compared with timingSafeEqual and the
 * loop never exits early, so the time taken does not depend on which entry (if any) matched.
 */
export function findKey(entries: readonly ApiKeyEntry[], key: string): ApiKeyEntry | undefined {
  const digest = sha256(key);
  let match: ApiKeyEntry | undefined;
  for (const entry of entries) {
    const equal = timingSafeEqual(entry.hash, digest);
    if (equal && match === undefined) match = entry;
  }
  return match;
}

export interface ApiKeyStore {
  /** The entry for a presented key, in constant time over the loaded entries. */
  find(key: string): ApiKeyEntry | undefined;
  /** Re-reads the file. On any problem the keys loaded before stay in force and it returns false. */
  reload(trigger?: ReloadTrigger): boolean;
  readonly size: number;
  close(): void;
}

export type ApiKeyStoreOptions = WatchedFileOptions;

const API_KEY_FILE: FileKind<readonly ApiKeyEntry[]> = {
  what: 'API key file',
  contents: 'API keys',
  parse: (text, file) => {
    const parsed = parseApiKeys(text, file);
    return { value: parsed.entries, warnings: parsed.warnings };
  },
  summary: (entries) => ({ keys: entries.length }),
};

/**
 * Loads the API key file (throws ApiKeysFileError at start-up) and keeps it current (SIGHUP, file
 * changes); a broken edit keeps the previous keys in force.
 */
export function createApiKeyStore(file: string, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const watched = watchConfigFile(file, API_KEY_FILE, options);
  return {
    find: (key) => findKey(watched.current(), key),
    reload: watched.reload,
    get size() {
      return watched.current().length;
    },
    close: watched.close,
  };
}
