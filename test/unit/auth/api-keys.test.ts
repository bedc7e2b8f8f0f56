import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ApiKeysFileError, createApiKeyStore, findKey, parseApiKeys } from '../../../src/auth/api-keys.ts';
import { eventually, recordingLog, sha256Hex, tempDir, writeTemp } from '../../support/auth-helpers.ts';

const KEY_A = 'dmg_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'dmg_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

const yaml = (entries: string) => `keys:\n${entries}`;
const entry = (name: string, key: string, extra = '') =>
  `  - name: ${name}\n    sha256: ${sha256Hex(key)}\n    surfaces: [mcp]\n    role: viewer\n${extra}`;

function problemsOf(text: string, file = 'keys.yaml'): string[] {
  try {
    parseApiKeys(text, file);
  } catch (error) {
    assert.ok(error instanceof ApiKeysFileError);
    return error.problems;
  }
  assert.fail('expected the file to be refused');
}

describe('API key file', () => {
  it('loads YAML entries with hashes, roles, surfaces and allowlists', () => {
    const { entries, warnings } = parseApiKeys(
      yaml(entry('ci', KEY_A, '    dags: ["etl-*"]\n    workspaces: [ops]\n') + entry('bot', KEY_B)),
      'keys.yaml',
    );
    assert.deepEqual(warnings, []);
    assert.equal(entries.length, 2);
    assert.deepEqual(entries[0]!.identity, {
      kind: 'api_key',
      id: 'ci',
      name: 'ci',
      role: 'viewer',
      dags: ['etl-*'],
      workspaces: ['ops'],
    });
    assert.deepEqual(entries[0]!.surfaces, ['mcp']);
    assert.equal(entries[1]!.identity.dags, undefined);
  });

  it('loads JSON for a .json file', () => {
    const text = JSON.stringify({
      keys: [{ name: 'ci', sha256: sha256Hex(KEY_A), surfaces: ['mcp', 'rest_api'], role: 'admin' }],
    });
    const { entries } = parseApiKeys(text, 'keys.json');
    assert.equal(entries[0]!.identity.role, 'admin');
  });

  it('accepts a plaintext key with a warning that does not repeat the key', () => {
    const { entries, warnings } = parseApiKeys(
      yaml(`  - name: dev\n    key: ${KEY_A}\n    surfaces: [mcp]\n    role: operator\n`),
      'keys.yaml',
    );
    assert.equal(entries[0]!.plaintext, true);
    assert.equal(findKey(entries, KEY_A)?.identity.id, 'dev');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /"dev" is stored in plaintext/);
    assert.ok(!warnings[0]!.includes(KEY_A));
  });

  it('refuses an unknown role at load time, naming the key and the allowed roles', () => {
    const problems = problemsOf(yaml(entry('ci', KEY_A).replace('role: viewer', 'role: superuser')));
    assert.deepEqual(problems, [
      'keys[0].role (key "ci"): unknown role "superuser"; allowed: viewer, operator, developer, manager, admin',
    ]);
  });

  it('lists every problem on its own line and never echoes a key', () => {
    const text = yaml(
      `  - name: a\n    key: short\n    surfaces: [mcp]\n    role: viewer\n` +
        `  - name: b\n    sha256: ABC\n    surfaces: [web]\n    role: viewer\n    dag: [x]\n` +
        `  - name: c\n    surfaces: [mcp]\n    role: viewer\n    dags: []\n`,
    );
    const problems = problemsOf(text);
    assert.ok(problems.some((p) => p.startsWith('keys[0].key (key "a"): must be at least 16 characters')));
    assert.ok(
      problems.some((p) => p.startsWith('keys[1].sha256 (key "b"): must be the lowercase hex SHA-256')),
    );
    assert.ok(
      problems.includes('keys[1].surfaces[0] (key "b"): unknown value "web"; allowed: mcp, rest_api'),
    );
    assert.ok(problems.includes('keys[1] (key "b"): unknown field "dag"'));
    assert.ok(problems.some((p) => p.startsWith('keys[2].dags (key "c"): must list at least one entry')));
    assert.ok(!problems.join('\n').includes('short'));
  });

  it('requires exactly one of sha256 and key, and distinct names and keys', () => {
    assert.deepEqual(problemsOf(yaml('  - name: a\n    surfaces: [mcp]\n    role: viewer\n')), [
      'keys[0] (key "a"): give exactly one of "sha256" (recommended) or "key"',
    ]);
    const both = `  - name: a\n    key: ${KEY_A}\n    sha256: ${sha256Hex(KEY_A)}\n    surfaces: [mcp]\n    role: viewer\n`;
    assert.equal(problemsOf(yaml(both)).length, 1);
    const duplicate = problemsOf(
      yaml(
        entry('a', KEY_A) +
          entry('a', KEY_B) +
          `  - name: c\n    key: ${KEY_A}\n    surfaces: [mcp]\n    role: viewer\n`,
      ),
    );
    assert.deepEqual(duplicate, [
      'keys[1] (key "a"): the name is already used by keys[0]',
      'keys[2] (key "c"): the same key is already listed as keys[0]',
    ]);
  });

  it('refuses a file that is not YAML or has no keys list', () => {
    assert.match(problemsOf('keys: [unclosed')[0]!, /^cannot parse: /);
    assert.deepEqual(problemsOf('tokens: []'), [
      'file: missing field "keys"',
      'file: unknown field "tokens"',
    ]);
  });

  it('finds a key by its hash and nothing else', () => {
    const { entries } = parseApiKeys(yaml(entry('a', KEY_A) + entry('b', KEY_B)), 'keys.yaml');
    assert.equal(findKey(entries, KEY_B)?.identity.id, 'b');
    assert.equal(findKey(entries, `${KEY_B}x`), undefined);
    assert.equal(findKey(entries, ''), undefined);
  });
});

describe('API key store', () => {
  it('throws at start-up with the file name when the file is missing or invalid', () => {
    assert.throws(
      () => createApiKeyStore('/nonexistent/keys.yaml', { watch: false, signals: false }),
      /invalid API key file \/nonexistent\/keys.yaml:\n {2}- cannot read: ENOENT/,
    );
  });

  it('reloads on SIGHUP, keeps the old keys when the new file is broken, and reports each reload', () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'keys.yaml', yaml(entry('a', KEY_A)));
    const log = recordingLog();
    const results: string[] = [];
    const store = createApiKeyStore(file, { log, watch: false, onReload: (result) => results.push(result) });
    try {
      assert.equal(store.find(KEY_B), undefined);
      writeFileSync(file, yaml(entry('a', KEY_A) + entry('b', KEY_B)));
      process.emit('SIGHUP', 'SIGHUP');
      assert.equal(store.find(KEY_B)?.identity.id, 'b');
      assert.equal(store.size, 2);

      writeFileSync(file, yaml(entry('b', KEY_B).replace('role: viewer', 'role: root')));
      assert.equal(store.reload(), false);
      assert.equal(store.find(KEY_A)?.identity.id, 'a', 'the previous keys stay in force');
      assert.deepEqual(results, ['ok', 'error']);
      assert.match(log.text(), /reload failed; the API keys loaded before stay in force \{[^\n]*"keys":2/);
      assert.match(log.text(), /unknown role \\"root\\"/);
    } finally {
      store.close();
    }
    assert.equal(process.listenerCount('SIGHUP'), 0, 'close() removes the SIGHUP listener');
  });

  it('reloads when the file changes, including an editor-style replace by rename', async () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'keys.yaml', yaml(entry('a', KEY_A)));
    const store = createApiKeyStore(file, { signals: false, debounceMs: 20 });
    try {
      writeFileSync(file, yaml(entry('a', KEY_A) + entry('b', KEY_B)));
      await eventually(() => store.find(KEY_B) !== undefined);

      const next = join(dir, 'keys.yaml.tmp');
      writeFileSync(next, yaml(entry('b', KEY_B)));
      renameSync(next, file);
      await eventually(() => store.find(KEY_A) === undefined);
      assert.equal(store.size, 1);
    } finally {
      store.close();
    }
  });
});

describe('API key file errors', () => {
  it('never quote the file: a syntax error names its position only (the text may hold a key)', () => {
    const secret = 'dmg_pasted_0123456789abcdefghijklmnopqrstuvwxyz';
    for (const [name, text] of [
      ['keys.json', `{"keys": [${secret}]}`],
      ['keys.yaml', `keys:\n  - name: a\n    key: "${secret}\n  bad: [`],
    ] as const) {
      const file = writeTemp(tempDir(), name, text);
      assert.throws(
        () => createApiKeyStore(file, { watch: false, signals: false }),
        (error: Error) =>
          error.message.includes('cannot parse') && !error.message.includes(secret.slice(0, 12)),
      );
    }
  });
});
