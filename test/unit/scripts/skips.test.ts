/**
 * No test skips quietly under CI. isCI() (scripts/ci.mjs) is the one answer to "is this CI", and every
 * skip in test/ goes through skipUnlessCI (test/support/ci.ts), which throws under CI: a skip option
 * whose value is skipUnlessCI(…) or a variable set from it, `t.skip(skipUnlessCI(…))`, and never
 * `test.skip`, `describe.skip`, `it.skip` or a todo.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isCI } from '../../../scripts/ci.mjs';
import { skipUnlessCI } from '../../support/ci.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const HELPER = 'test/support/ci.ts';

function testSources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) testSources(path, out);
    else if (entry.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** The skips of one source file that do not go through skipUnlessCI, as `line: text`. */
function unguardedSkips(source: string): string[] {
  // Variables holding a skip reason made by skipUnlessCI (`const skip = skipUnlessCI(…)`).
  const guarded = new Set(
    [...source.matchAll(/\b(?:const|let)\s+(\w+)\s*=\s*skipUnlessCI\(/g)].map((match) => match[1]!),
  );
  const guardedValue = (value: string): boolean => {
    const terms = value
      .trim()
      .replace(/[,)}\s]+$/, '')
      .split('||')
      .map((term) => term.trim());
    return terms.every((term) => term.startsWith('skipUnlessCI(') || guarded.has(term));
  };
  const problems: string[] = [];
  const lines = source.split('\n');
  lines.forEach((line, index) => {
    const code = line.replace(/^\s*(\/\/|\*|\/\*).*$/, '').replace(/'[^']*'|`[^`]*`/g, "''");
    const at = `${index + 1}: ${line.trim()}`;
    // The skip and todo members of test, it, describe and suite; a todo option in any form.
    if (/\b(?:test|it|describe|suite)\.(?:skip|todo)\b/.test(code) || /\btodo\s*:|\.todo\(/.test(code)) {
      problems.push(at);
      return;
    }
    // t.skip(reason), context.skip(…): the reason must be skipUnlessCI(…).
    for (const match of code.matchAll(/\.skip\(\s*([^\n]*)/g)) {
      if (!match[1]!.startsWith('skipUnlessCI(')) problems.push(at);
    }
    // The skip option: `skip: value` (the value may continue on the next line) or the shorthand `{ skip }`.
    for (const match of code.matchAll(/(?<![.\w])skip\s*:\s*([^\n]*)/g)) {
      const value = match[1]!.trim() === '' ? (lines[index + 1] ?? '') : match[1]!;
      if (!guardedValue(value)) problems.push(at);
    }
    for (const _ of code.matchAll(/[{,]\s*skip\s*(?=[,}])|^\s*skip\s*,\s*$/g)) {
      if (!guarded.has('skip')) problems.push(at);
    }
  });
  return problems;
}

describe('isCI', () => {
  it('accepts true and 1 in any case, and nothing else', () => {
    for (const value of ['true', 'TRUE', 'True', '1', ' true '])
      assert.equal(isCI({ CI: value }), true, value);
    for (const value of [undefined, '', '0', 'false', 'yes', 'on', 'truthy']) {
      assert.equal(isCI(value === undefined ? {} : { CI: value }), false, String(value));
    }
  });

  it('skipUnlessCI gives the reason outside CI and throws under it', () => {
    const saved = process.env.CI;
    try {
      process.env.CI = 'false';
      assert.equal(skipUnlessCI('no tool'), 'no tool');
      assert.equal(skipUnlessCI(undefined), false);
      process.env.CI = '1';
      assert.throws(() => skipUnlessCI('no tool'), /CI: .*no tool/);
      assert.equal(skipUnlessCI(false), false);
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });
});

const SKIP = 'skip';
const TODO = 'todo';

describe('every skip in test/ fails under CI', () => {
  it('the scan finds each kind of unguarded skip (it can fail)', () => {
    const unguarded = [
      "test('a', { skip: !existsSync('/dev/full') }, () => {});",
      "const skip = tool.reason ?? false;\ntest('a', { skip }, () => {});",
      "describe('a', {\n  skip: 'no python',\n}, () => {});",
      "test('a', (t) => t.skip('Dagu 1.x'));",
      "test('a', (t) => { t.skip(); });",
      // Built from parts, so that this file holds no focused or skipped test a text scan would find.
      `test.${SKIP}('a', () => {});`,
      `describe.${SKIP}('a', () => {});`,
      `it.${TODO}('a');`,
      `test('a', { ${TODO}: true }, () => {});`,
      "const skip = skipUnlessCI(reason);\ntest('a', { skip: skip || other }, () => {});",
    ];
    for (const source of unguarded) assert.notDeepEqual(unguardedSkips(source), [], source);
    const guarded = [
      "const skip = skipUnlessCI(tool.reason);\ntest('a', { skip }, () => {});",
      "describe('a', {\n  skip: skip || skipUnlessCI(x ? false : 'none'),\n}, () => {});\nconst skip = skipUnlessCI(r);",
      "test('a', (t) => t.skip(skipUnlessCI('Dagu 1.x')));",
      "it('a', { skip: skipUnlessCI(existsSync('/dev/full') ? false : 'no /dev/full') }, () => {});",
      `// test.${SKIP}('a') in a comment`,
    ];
    for (const source of guarded) assert.deepEqual(unguardedSkips(source), [], source);
  });

  it('no test file skips without skipUnlessCI', () => {
    const found: string[] = [];
    for (const file of testSources(join(ROOT, 'test'))) {
      const name = relative(ROOT, file).split('\\').join('/');
      if (name === HELPER || name === 'test/unit/scripts/skips.test.ts') continue;
      for (const problem of unguardedSkips(readFileSync(file, 'utf8'))) found.push(`${name}:${problem}`);
    }
    assert.deepEqual(found, [], 'skips that would pass a CI run quietly');
  });
});
