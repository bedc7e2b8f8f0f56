import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createApiKeyStore } from '../../../src/auth/api-keys.ts';
import { keygen } from '../../../src/auth/keygen.ts';
import { tempDir } from '../../support/temp.ts';

/** Runs keygen and returns its exit code, what it printed and the key it printed. */
function run(args: string[]) {
  const lines: string[] = [];
  const code = keygen(args, { log: (text) => lines.push(text), error: (text) => lines.push(text) });
  const text = lines.join('\n');
  return { code, text, key: /dmg_[A-Za-z0-9_-]{43}/.exec(text)?.[0] };
}

describe('keygen --file', () => {
  it('creates the file, then adds each new key under keys:, keeping comments; the gateway accepts both keys', () => {
    const file = join(tempDir(), 'keys.yaml');
    const first = run(['--name', 'ci', '--file', file]);
    assert.equal(first.code, 0, first.text);
    writeFileSync(file, `# managed by ops\n${readFileSync(file, 'utf8')}`);
    const second = run(['--name', 'bot', '--dags', 'etl-*', '--file', file]);
    assert.equal(second.code, 0, second.text);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^# managed by ops/);
    assert.ok(!text.includes(first.key!) && !text.includes(second.key!), 'only hashes are stored');
    const store = createApiKeyStore(file, { watch: false, signals: false });
    try {
      assert.equal(store.find(first.key!)?.identity.id, 'ci');
      assert.deepEqual(store.find(second.key!)?.identity.dags, ['etl-*']);
    } finally {
      store.close();
    }
  });

  it('writes block-style YAML, as the printed entry shows: a new file, and a file holding `keys: []`', () => {
    const file = join(tempDir(), 'keys.yaml');
    assert.equal(run(['--name', 'ci', '--dags', 'etl-*', '--file', file]).code, 0);
    const created = readFileSync(file, 'utf8');
    assert.match(created, /^keys:\n {2}- name: ci\n {4}sha256: [0-9a-f]{64}\n {4}surfaces:\n {6}- mcp\n/);
    assert.doesNotMatch(created, /[[{]/);
    const empty = join(tempDir(), 'keys.yaml');
    writeFileSync(empty, '# managed by ops\nkeys: []\n');
    assert.equal(run(['--name', 'bot', '--file', empty]).code, 0);
    const added = readFileSync(empty, 'utf8');
    assert.match(added, /^# managed by ops\nkeys:\n {2}- name: bot\n/);
    assert.doesNotMatch(added, /[[{]/);
  });

  it('refuses a name already in the file and leaves the file as it was', () => {
    const file = join(tempDir(), 'keys.yaml');
    assert.equal(run(['--name', 'ci', '--file', file]).code, 0);
    const before = readFileSync(file, 'utf8');
    const again = run(['--name', 'ci', '--file', file]);
    assert.equal(again.code, 2);
    assert.match(again.text, /already used/);
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('adds to a JSON key file as JSON, and never quotes a broken file', () => {
    const dir = tempDir();
    const json = join(dir, 'keys.json');
    writeFileSync(json, '{"keys": []}\n');
    const added = run(['--name', 'ci', '--file', json]);
    assert.equal(added.code, 0, added.text);
    assert.equal((JSON.parse(readFileSync(json, 'utf8')) as { keys: unknown[] }).keys.length, 1);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"keys": [dmg_pasted_secret_0123456789abcdef');
    const refused = run(['--file', broken]);
    assert.equal(refused.code, 2);
    assert.doesNotMatch(refused.text, /dmg_pasted/);
  });
});
