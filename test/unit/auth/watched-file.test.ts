/** Configuration files kept current: parsed at start, swapped atomically on reload, the old value kept on error. */
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  ConfigFileError,
  type FileKind,
  parseDocument,
  readConfigFile,
  schemaProblems,
  watchConfigFile,
} from '../../../src/auth/watched-file.ts';
import { recordingLog } from '../../support/auth-helpers.ts';
import { tempDir, writeTemp } from '../../support/temp.ts';

/** A file of `names:` lists; an entry `bad` is a problem, an entry `old` a warning. */
const NAMES: FileKind<string[]> = {
  what: 'names file',
  contents: 'names',
  parse(text, file) {
    const document = parseDocument(text, file, 'names file') as { names?: string[] } | null;
    const names = document?.names ?? [];
    if (names.includes('bad')) throw new ConfigFileError(file, ['names: bad is not allowed'], 'names file');
    return { value: names, warnings: names.includes('old') ? ['old is deprecated'] : [] };
  },
  summary: (value) => ({ count: value.length }),
};

describe('parseDocument and readConfigFile', () => {
  test('YAML or JSON by extension', () => {
    assert.deepEqual(parseDocument('a: [1, 2]\n', 'f.yaml', 'x'), { a: [1, 2] });
    assert.deepEqual(parseDocument('{"a":1}', 'f.json', 'x'), { a: 1 });
  });

  test('a syntax error names the position only, never the text around it', () => {
    const secret = 'key: "sk-very-secret';
    assert.throws(
      () => parseDocument(secret, 'keys.yaml', 'API key file'),
      (error: unknown) =>
        error instanceof ConfigFileError &&
        error.problems.length === 1 &&
        /^cannot parse: not valid YAML/.test(error.problems[0]!) &&
        !error.message.includes('sk-very-secret') &&
        error.message.startsWith('invalid API key file keys.yaml:\n  - '),
    );
    assert.throws(
      () => parseDocument('{"k": "sk-secret"', 'keys.json', 'API key file'),
      (error: unknown) =>
        error instanceof ConfigFileError &&
        /not valid JSON \(at position \d+/.test(error.problems[0]!) &&
        !error.message.includes('sk-secret'),
    );
  });

  test('an unreadable file is a ConfigFileError with the errno code', () => {
    assert.throws(
      () => readConfigFile(join(tempDir(), 'missing.yaml'), 'groups file'),
      (error: unknown) => error instanceof ConfigFileError && error.problems[0] === 'cannot read: ENOENT',
    );
  });
});

test('schemaProblems: one line per place in the file, dotted, each once; the document itself as file', () => {
  const refusal = (instancePath: string, message: string) => ({
    instancePath,
    message,
    keyword: 'x',
    schemaPath: '#',
    params: {},
  });
  const errors = [
    refusal('/clients/0/client_id', 'must match pattern'),
    refusal('/clients/0/client_id', 'must match pattern'),
    refusal('', "must have required property 'clients'"),
  ];
  assert.deepEqual(schemaProblems(errors), [
    'clients.0.client_id: must match pattern',
    "file: must have required property 'clients'",
  ]);
  assert.deepEqual(schemaProblems(undefined), []);
});

describe('watchConfigFile', () => {
  test('loads at start, logs warnings and a summary; a broken file at start throws', () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'names.yaml', 'names: [a, old]\n');
    const log = recordingLog();
    const { lines } = log;
    const watched = watchConfigFile(file, NAMES, { log, watch: false, signals: false });
    try {
      assert.deepEqual(watched.current(), ['a', 'old']);
      assert.deepEqual(
        lines.map((line) => [line.level, line.message]),
        [
          ['warn', 'old is deprecated'],
          ['info', 'names loaded'],
        ],
      );
      assert.equal(lines[1]!.fields.count, 2);
    } finally {
      watched.close();
    }
    const broken = writeTemp(dir, 'broken.yaml', 'names: [bad]\n');
    assert.throws(() => watchConfigFile(broken, NAMES, { watch: false, signals: false }), ConfigFileError);
  });

  test('a reload swaps the value in; a broken edit or a removed file keeps the old one and says so', () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'names.yaml', 'names: [a]\n');
    const log = recordingLog();
    const { lines } = log;
    const results: string[] = [];
    const watched = watchConfigFile(file, NAMES, {
      log,
      watch: false,
      signals: false,
      onReload: (result) => results.push(result),
    });
    try {
      writeFileSync(file, 'names: [a, b]\n');
      assert.equal(watched.reload(), true);
      assert.deepEqual(watched.current(), ['a', 'b']);
      writeFileSync(file, 'names: [bad]\n');
      assert.equal(watched.reload('signal'), false);
      assert.deepEqual(watched.current(), ['a', 'b']);
      rmSync(file);
      assert.equal(watched.reload(), false);
      assert.deepEqual(watched.current(), ['a', 'b']);
      assert.deepEqual(results, ['ok', 'error', 'error']);
      const failures = lines.filter((line) => line.level === 'error');
      assert.deepEqual(failures[0]!.fields, {
        file,
        trigger: 'signal',
        problems: ['names: bad is not allowed'],
        count: 2,
      });
      assert.equal(failures[0]!.message, 'names file reload failed; the names loaded before stay in force');
      assert.deepEqual(failures[1]!.fields.problems, ['cannot read: ENOENT']);
    } finally {
      watched.close();
    }
  });

  test('SIGHUP reloads while open and no longer after close', () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'names.yaml', 'names: [a]\n');
    const results: string[] = [];
    const watched = watchConfigFile(file, NAMES, {
      watch: false,
      onReload: (result) => results.push(result),
    });
    writeFileSync(file, 'names: [c]\n');
    process.emit('SIGHUP', 'SIGHUP');
    assert.deepEqual(watched.current(), ['c']);
    watched.close();
    writeFileSync(file, 'names: [d]\n');
    process.emit('SIGHUP', 'SIGHUP');
    assert.deepEqual(watched.current(), ['c']);
    assert.deepEqual(results, ['ok']);
  });

  test('a file replaced in its folder (editor or ConfigMap swap) is reloaded by the watch', async () => {
    const dir = tempDir();
    const file = writeTemp(dir, 'names.yaml', 'names: [a]\n');
    let reloaded!: (result: string) => void;
    // The watch and its debounce timer do not hold the process open; this bound does, and fails the wait.
    let bound: NodeJS.Timeout | undefined;
    const done = new Promise<string>((resolve, reject) => {
      reloaded = resolve;
      bound = setTimeout(() => reject(new Error('no reload within 10 s of the swap')), 10_000);
    });
    const watched = watchConfigFile(file, NAMES, {
      signals: false,
      debounceMs: 10,
      onReload: (result) => reloaded(result),
    });
    try {
      const next = writeTemp(dir, 'names.yaml.tmp', 'names: [z]\n');
      renameSync(next, file);
      assert.equal(await done, 'ok');
      assert.deepEqual(watched.current(), ['z']);
    } finally {
      clearTimeout(bound);
      watched.close();
    }
  });
});
