import { createHash, timingSafeEqual } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { type Log, silentLog } from '../core/log.ts';
import { type Identity, ROLES } from './identity.ts';

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

export class ApiKeysFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid API key file ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ApiKeysFileError';
  }
}

export const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

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

function parseDocument(text: string, file: string): unknown {
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ApiKeysFileError(file, [`cannot parse: ${(error as Error).message.split('\n')[0]}`]);
  }
}

/** Validates an API key file's text (YAML, or JSON for `.json`). Throws ApiKeysFileError listing every problem. */
export function parseApiKeys(text: string, file: string): ParsedApiKeys {
  const data = parseDocument(text, file);
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

function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ApiKeysFileError(file, [
      `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    ]);
  }
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

export type ReloadTrigger = 'signal' | 'watch' | 'manual';

export interface ApiKeyStore {
  /** The entry for a presented key, in constant time over the loaded entries. */
  find(key: string): ApiKeyEntry | undefined;
  /** Re-reads the file. On any problem the keys loaded before stay in force and it returns false. */
  reload(trigger?: ReloadTrigger): boolean;
  readonly size: number;
  close(): void;
}

export interface ApiKeyStoreOptions {
  log?: Log;
  /** Reload when the file (or its directory, for symlink swaps such as Kubernetes ConfigMaps) changes. Default true. */
  watch?: boolean;
  /** Reload on SIGHUP. Default true. */
  signals?: boolean;
  debounceMs?: number;
  onReload?: (result: 'ok' | 'error') => void;
}

/**
 * Loads the API key file (throws ApiKeysFileError at start-up) and keeps it current: SIGHUP or a change
 * of the file swaps in the new set atomically, so requests in flight are never dropped, and a broken
 * edit keeps the previous keys in force.
 */
export function createApiKeyStore(file: string, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const log = options.log ?? silentLog;
  const text = readKeyFile(file);
  const loaded = parseApiKeys(text, file);
  let entries: readonly ApiKeyEntry[] = loaded.entries;
  let fingerprint = sha256(text).toString('hex');
  for (const warning of loaded.warnings) log.warn({ file }, warning);
  log.info({ file, keys: entries.length }, 'API keys loaded');

  function reload(trigger: ReloadTrigger = 'manual'): boolean {
    try {
      const next = readKeyFile(file);
      const nextFingerprint = sha256(next).toString('hex');
      if (trigger === 'watch' && nextFingerprint === fingerprint) return true;
      const parsed = parseApiKeys(next, file);
      entries = parsed.entries;
      fingerprint = nextFingerprint;
      for (const warning of parsed.warnings) log.warn({ file }, warning);
      log.info({ file, keys: entries.length, trigger }, 'API keys reloaded');
      options.onReload?.('ok');
      return true;
    } catch (error) {
      const problems = error instanceof ApiKeysFileError ? error.problems : [String(error)];
      log.error(
        { file, trigger, problems },
        `API key file reload failed; the ${entries.length} keys loaded before stay in force`,
      );
      options.onReload?.('error');
      return false;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => reload('watch'), options.debounceMs ?? 200);
    timer.unref();
  };

  let watcher: FSWatcher | undefined;
  if (options.watch ?? true) {
    try {
      // The directory, not the file: editors and ConfigMaps replace the file, which ends a file watch.
      const name = basename(file);
      watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name || changed.startsWith('..')) schedule();
      });
      watcher.on('error', (error) => log.warn({ file, error: error.message }, 'API key file watch stopped'));
    } catch (error) {
      log.warn(
        { file, error: (error as Error).message },
        'cannot watch the API key file; reload it with SIGHUP',
      );
    }
  }

  const onSignal = () => reload('signal');
  if (options.signals ?? true) process.on('SIGHUP', onSignal);

  return {
    find: (key) => findKey(entries, key),
    reload,
    get size() {
      return entries.length;
    },
    close() {
      clearTimeout(timer);
      watcher?.close();
      process.off('SIGHUP', onSignal);
    },
  };
}
