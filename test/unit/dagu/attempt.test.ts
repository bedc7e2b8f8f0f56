import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptIdOf } from '../../../src/dagu/attempt.ts';

const node = (stdout: string) => ({ step: { name: 'x' }, stdout, stderr: stdout.replace(/\.out$/, '.err') });

describe('the attempt id of a run, from its log folders', () => {
  it('the newest run_<time>_<attempt> log folder among the steps (retry keeps old nodes)', () => {
    const details = {
      nodes: [
        node(
          '/var/dagu/logs/etl/dag-run_20260701_080000Z_r1/run_20260701_080000Z_a11111/x.20260701.080000.000.r1.out',
        ),
        node(
          '/var/dagu/logs/etl/dag-run_20260701_080000Z_r1/run_20260701_090500Z_b22222/y.20260701.090500.000.r1.out',
        ),
        node(''),
      ],
      onExit: node('C:\\dagu\\logs\\etl\\dag-run_x\\run_20260701_090500Z_b22222\\onExit.out'),
    };
    assert.equal(attemptIdOf(details), 'b22222');
    assert.equal(attemptIdOf({ nodes: [node('')] }), undefined);
    assert.equal(attemptIdOf({ nodes: [] }), undefined);
    assert.equal(attemptIdOf({ attemptId: 'explicit', nodes: [] }), 'explicit');
    // Only the folder the file is in counts, read from the path's end, with either separator.
    const only = (path: string) => attemptIdOf({ nodes: [node(path)] });
    assert.equal(only('/logs/run_20260701_080000Z_a1/sub/x.out'), undefined);
    assert.equal(only('/logs/run_20260701_080000Z_a1/'), 'a1');
    assert.equal(only('run_20260701_080000Z_a1/x.out'), undefined);
    assert.equal(only('/run_20260701_080000Z_a1/x.out'), 'a1');
    assert.equal(only('C:\\logs/run_20260701_080000Z_b-2\\x.out'), 'b-2');
    assert.equal(only('/logs/run_2026070_080000Z_a1/x.out'), undefined);
    assert.equal(only('/logs/xrun_20260701_080000Z_a1/x.out'), undefined);
  });

  it('a path in the folder just seen is skipped; another folder of the same length is not', () => {
    const at = (folder: string, file: string) => `/logs/etl/dag-run_x/${folder}/${file}.out`;
    const older = 'run_20260701_080000Z_old1';
    const newer = 'run_20260701_090000Z_new2';
    // The two folders have the same length: a check by length alone would skip the newer one.
    const nodes = [node(at(older, 'a')), node(at(newer, 'b')), node(at(newer, 'c')), node(at(older, 'd'))];
    assert.equal(attemptIdOf({ nodes }), 'new2');
    // Same length, same file separator index, other folder: not mistaken for the folder just seen.
    const twin = 'run_20260701_095959Z_new3';
    assert.equal(attemptIdOf({ nodes: [node(at(newer, 'b')), node(at(twin, 'b'))] }), 'new3');
    assert.equal(
      attemptIdOf({ nodes: [], onFailure: node(at(twin, 'f')), onWait: node(at(newer, 'w')) }),
      'new3',
    );
  });
});
