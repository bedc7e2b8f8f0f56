import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseDocument, stringify, YAMLSeq } from 'yaml';
import { ApiKeysFileError, parseApiKeys, SURFACES, sha256 } from './api-keys.ts';
import { ROLES } from './identity.ts';

/**
 * `dagu-mcp-gateway keygen [--name ci --role viewer --surfaces mcp --dags 'etl-*' --workspaces ops]`
 * (or `npm run keygen -- …` from a clone) prints a new random API key once, and the entry to paste into
 * AUTH_API_KEYS_FILE (its SHA-256 only); with `--file PATH` it adds the entry to that file itself.
 */
const usage = `usage: dagu-mcp-gateway keygen [--name NAME] [--role ${ROLES.join('|')}] [--surfaces mcp[,rest_api]]
                                [--dags GLOB[,GLOB]] [--workspaces NAME[,NAME]] [--file KEYS_FILE]`;

/**
 * The key file's text with `entry` added under `keys:` (created when the file does not exist). YAML
 * keeps its comments and layout; a `.json` file is rewritten as JSON.
 */
export function withKeyEntry(text: string | undefined, file: string, entry: Record<string, unknown>): string {
  if (file.endsWith('.json')) {
    const data = (text === undefined ? { keys: [] } : JSON.parse(text)) as { keys?: unknown[] };
    return `${JSON.stringify({ ...data, keys: [...(Array.isArray(data.keys) ? data.keys : []), entry] }, null, 2)}\n`;
  }
  if (text === undefined) return stringify({ keys: [entry] });
  const document = parseDocument(text);
  const keys = document.get('keys', true);
  if (keys instanceof YAMLSeq) {
    // An empty `keys: []` would keep its flow style and print every entry inside brackets.
    if (keys.items.length === 0) keys.flow = false;
    keys.add(document.createNode(entry));
  } else document.set('keys', document.createNode([entry]));
  return document.toString();
}

/** Replaced by rename: the gateway's watcher reloads the whole new file, never a half-written one. */
function replaceKeyFile(file: string, text: string): void {
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, text, { mode: 0o600 });
  renameSync(next, file);
}

export interface KeygenOutput {
  log(text: string): void;
  error(text: string): void;
}

export function keygen(argv: readonly string[], out: KeygenOutput = console): number {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        name: { type: 'string', default: `key-${new Date().toISOString().slice(0, 10)}` },
        role: { type: 'string', default: 'viewer' },
        surfaces: { type: 'string', default: 'mcp' },
        dags: { type: 'string' },
        workspaces: { type: 'string' },
        file: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    out.error(`${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    out.log(usage);
    return 0;
  }
  const list = (value: unknown) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : undefined;

  // 32 random bytes: 256 bits, base64url (no dots, so never mistaken for a JWT).
  const key = `dmg_${randomBytes(32).toString('base64url')}`;
  const entry: Record<string, unknown> = {
    name: values.name,
    sha256: sha256(key).toString('hex'),
    surfaces: list(values.surfaces),
    role: values.role,
  };
  const dags = list(values.dags);
  const workspaces = list(values.workspaces);
  if (dags) entry.dags = dags;
  if (workspaces) entry.workspaces = workspaces;
  const file = typeof values.file === 'string' ? values.file : undefined;
  let yaml: string;
  try {
    const before = file !== undefined && existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    // A broken file is reported as the gateway reports it (never quoting its text), not edited.
    if (before !== undefined) parseApiKeys(before, file!);
    yaml = file === undefined ? stringify({ keys: [entry] }) : withKeyEntry(before, file, entry);
    // The same validation the gateway applies at start-up, over the whole file (a name used twice…).
    parseApiKeys(yaml, file ?? 'keygen');
  } catch (error) {
    const problems = error instanceof ApiKeysFileError ? error.problems : [String(error)];
    out.error(
      `keygen: ${problems.join('\n')}\n(roles: ${ROLES.join(', ')}; surfaces: ${SURFACES.join(', ')})`,
    );
    return 2;
  }
  if (file !== undefined) {
    replaceKeyFile(file, yaml);
    out.log(`New API key (shown once; give it to the client, store it as a secret):

  ${key}

Added "${String(values.name)}" to ${file} (only the hash is stored); a running gateway reloads it.`);
    return 0;
  }
  out.log(`New API key (shown once; give it to the client, store it as a secret):

  ${key}

Entry for AUTH_API_KEYS_FILE (only the hash is stored; in an existing file, add the item under \`keys:\`):

${yaml}
Clients send it as:  Authorization: Bearer ${key.slice(0, 8)}…`);
  return 0;
}
