/**
 * Tests mirror the code (issue 16): every module of src/ has a test file at the same path under
 * test/unit/ (or one named by its kind under test/integration/), or has no runtime code to test.
 * scripts/test-mirror.mjs measures it; the modules still without a mirror are a ratchet that only shrinks.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { exemption, mirrorFigures, mirrorsOf, strayHelpers } from '../../../scripts/test-mirror.mjs';

/**
 * Modules that still have no mirror, each with why. Entries may only be removed (write the module's test
 * file, then drop its line): a module added to src/ without a test fails the first test below.
 */
const RATCHET: Record<string, string> = {
  'core/log.ts': 'an interface and a logger that does nothing: no behaviour of its own to assert',
};

describe('tests mirror the code', () => {
  const figures = mirrorFigures();

  it('every module has a test file at its path, has no runtime code, or is on the shrinking ratchet', () => {
    const grown = figures.unmirrored.filter((key) => !(key in RATCHET));
    assert.deepEqual(grown, [], `modules without a test file at their path: ${grown.join(', ')}`);
    const mirroredNow = Object.keys(RATCHET).filter((key) => !figures.unmirrored.includes(key));
    assert.deepEqual(mirroredNow, [], `now mirrored or gone: remove from RATCHET: ${mirroredNow.join(', ')}`);
  });

  it('every helper lives under test/support/', () => {
    assert.deepEqual(strayHelpers(), []);
  });

  it('each ratchet entry says why', () => {
    for (const [key, reason] of Object.entries(RATCHET)) assert.ok(reason.length >= 10, key);
  });

  it('the exempt modules are the type-only ones and re-export indexes', () => {
    for (const [key, why] of Object.entries(figures.exempt)) {
      assert.ok(why === 'type-only' || why === 're-export', `${key}: ${why}`);
    }
    assert.equal(figures.exempt['read/types.ts'], 'type-only');
    assert.equal(
      figures.modules,
      Object.keys(figures.mirrored).length + Object.keys(figures.exempt).length + figures.unmirrored.length,
    );
  });
});

describe('the mirror measure', () => {
  it('exempts by parsing: types only, or only imports and exports', () => {
    assert.equal(exemption('export type A = string;\nexport interface B { a: A }\n'), 'type-only');
    assert.equal(exemption("import type { X } from './x.ts';\nexport type Y = X[];\n"), 'type-only');
    assert.equal(
      exemption(
        "export * from './a.ts';\nexport { b, c as d } from './b.ts';\nexport type { E } from './e.ts';\n",
      ),
      're-export',
    );
    assert.equal(exemption("import { a } from './a.ts';\nexport { a };\n"), 're-export');
    assert.equal(exemption('export const a = 1;\n'), undefined);
    assert.equal(exemption("import './polyfill.ts';\n"), undefined);
    assert.equal(
      exemption("export * from './a.ts';\nexport function f(): number { return 1; }\n"),
      undefined,
    );
    // A comment or a type that mentions code is still not code.
    assert.equal(exemption('/** const x = 1 */\nexport type F = () => void;\n'), 'type-only');
  });

  it('matches unit mirrors with or without a kind, and integration mirrors only by kind at the same path', () => {
    const files = [
      'test/unit/http/body.test.ts',
      'test/unit/http/body.snapshot.test.ts',
      'test/unit/http/body-extra.test.ts',
      'test/unit/body.test.ts',
      'test/integration/http/body.e2e.test.ts',
      'test/integration/http/body.test.ts',
      'test/integration/mcp/body.e2e.test.ts',
      'test/unit/http/body.whatever.test.ts',
    ];
    assert.deepEqual(mirrorsOf('http/body.ts', files), [
      'test/unit/http/body.test.ts',
      'test/unit/http/body.snapshot.test.ts',
      'test/integration/http/body.e2e.test.ts',
    ]);
  });

  it('finds the unmirrored modules of a fixture tree (the check can fail)', () => {
    const root = mkdtempSync(join(tmpdir(), 'test-mirror-'));
    try {
      const files: Record<string, string> = {
        'src/tested.ts': 'export const a = 1;\n',
        'src/untested.ts': 'export function f(): number { return 1; }\n',
        'src/deep/kinded.ts': 'export const b = 2;\n',
        'src/deep/kindless.ts': 'export const c = 3;\n',
        'src/deep/types.ts': 'export interface T { a: string }\n',
        'src/deep/index.ts': "export * from './kinded.ts';\nexport type { T } from './types.ts';\n",
        'src/deep/wrong-place.ts': 'export const d = 4;\n',
        'test/unit/tested.test.ts': '',
        'test/integration/deep/kinded.e2e.test.ts': '',
        'test/integration/deep/kindless.test.ts': '',
        'test/unit/wrong-place.test.ts': '',
        'test/support/untested.ts': '',
        'test/integration/deep/tools.ts': '',
        'test/integration/deep/data.json': '',
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      const fixture = mirrorFigures(root);
      assert.equal(fixture.modules, 7);
      assert.deepEqual(fixture.unmirrored, ['deep/kindless.ts', 'deep/wrong-place.ts', 'untested.ts']);
      assert.deepEqual(fixture.exempt, { 'deep/index.ts': 're-export', 'deep/types.ts': 'type-only' });
      assert.deepEqual(strayHelpers(root), ['test/integration/deep/tools.ts']);
      assert.deepEqual(fixture.mirrored, {
        'deep/kinded.ts': ['test/integration/deep/kinded.e2e.test.ts'],
        'tested.ts': ['test/unit/tested.test.ts'],
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
