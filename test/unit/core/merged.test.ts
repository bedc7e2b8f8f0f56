/**
 * `merged` (src/core/merged.ts): what `{ ...base, ...more }` gives, and, unlike that spread on Node 20,
 * one map for every result of the same shape (checked with V8's own `%HaveSameMap` in a child process).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { merged } from '../../../src/core/merged.ts';

describe('merged', () => {
  it('is a new object with the members of both, the second winning, undefined members kept', () => {
    const base = { name: 'nightly', dagRunId: 'latest', subRunId: undefined as string | undefined };
    const result = merged(base, { dagRunId: 'r1', stepName: 'build' });
    assert.deepEqual(result, { name: 'nightly', dagRunId: 'r1', subRunId: undefined, stepName: 'build' });
    assert.ok(Object.hasOwn(result, 'subRunId'));
    assert.notEqual(result, base);
    assert.equal(base.dagRunId, 'latest');
  });

  it('gives every result of one shape the same map, where a leading spread may not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'merged-maps-'));
    try {
      const script = join(dir, 'maps.mts');
      const module = pathToFileURL(join(import.meta.dirname, '../../../src/core/merged.ts')).href;
      // Fresh objects each time, as a read builds them per call; counts results whose map differs from the one before.
      writeFileSync(
        script,
        `import { merged } from ${JSON.stringify(module)};
// V8's intrinsic (--allow-natives-syntax), in a string that V8 parses and the TypeScript transform does not.
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const fresh = (i: number) => ({ name: 'dag-' + i, dagRunId: 'run' });
const changes = (make: (i: number) => object) => {
  let previous: object | undefined;
  let count = 0;
  for (let i = 0; i < 5000; i++) {
    const result = make(i);
    if (previous !== undefined && !sameMap(previous, result)) count++;
    previous = result;
  }
  return count;
};
console.log(JSON.stringify({
  merged: changes((i) => merged(fresh(i), { stepName: 'build' })),
  spread: changes((i) => ({ ...fresh(i), stepName: 'build' })),
}));
`,
      );
      const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script], {
        encoding: 'utf8',
      });
      const counted = JSON.parse(output) as { merged: number; spread: number };
      assert.equal(counted.merged, 0);
      // The spread's count is V8's (thousands on Node 20, none on Node 24): printed, not asserted.
      console.log(`maps changed over 5,000 results on Node ${process.versions.node}:`, counted);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
