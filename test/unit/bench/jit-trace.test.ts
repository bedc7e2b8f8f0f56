import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jitLine, jitTotals } from '../../../bench/jit-trace.ts';

// Lines as Node 20 and Node 24 write them with `--trace-opt --trace-deopt` (addresses shortened),
// among the gateway's own log lines.
const OUTPUT = [
  '[marking 0x335f0f2c1fb9 <JSFunction onUpstream (sfi = 0x3f7708166931)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
  '[compiling method 0x335f0f2c1fb9 <JSFunction onUpstream (sfi = 0x3f7708166931)> (target TURBOFAN), mode: ConcurrencyMode::kConcurrent]',
  '[completed compiling 0x335f0f2c1fb9 <JSFunction onUpstream (sfi = 0x3f7708166931)> (target TURBOFAN) - took 0.101, 4.126, 0.070 ms]',
  '[completed optimizing 0x335f0f2c1fb9 <JSFunction onUpstream (sfi = 0x3f7708166931)> (target TURBOFAN)]',
  '[compiling method 0x317021c28b31 <JSFunction _TstNode (sfi = 0x1b6074d992e9)> (target MAGLEV), mode: ConcurrencyMode::kConcurrent]',
  '{"level":30,"msg":"request completed"}',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x393ee0291d59 <JSFunction onComplete (sfi = 0xd72d37d85b9)>, 0x1be6f930cd99 <Code TURBOFAN>, opt id 427]',
  '[marking dependent code 0x21f63513eac1 <Code TURBOFAN> (0x2993850c51e9 <SharedFunctionInfo processImmediate>) (opt id 146) for deoptimization, reason: weak objects]',
  '[marking dependent code 0x0597031fe9b9 <Code MAGLEV> (0x0aef8c655189 <SharedFunctionInfo Readable.push>) (opt id 68) for deoptimization, reason: embedded weak objects cleared]',
  '[marking dependent code 0x3a19ebed6331 <Code TURBOFAN> (0x734644e40a9 <SharedFunctionInfo get>) (opt id 12) for deoptimization, reason: code dependencies]',
  '',
].join('\n');

describe('jitTotals', () => {
  it('counts optimizing compiles, bailouts and discarded code, and which was discarded for dead objects', () => {
    assert.deepEqual(jitTotals(OUTPUT), { compiles: 2, bailouts: 1, discarded: 3, discardedDeadObjects: 2 });
    assert.deepEqual(jitTotals('{"level":30}\n'), {
      compiles: 0,
      bailouts: 0,
      discarded: 0,
      discardedDeadObjects: 0,
    });
  });

  it('prints totals per 1,000 calls', () => {
    assert.equal(
      jitLine({ compiles: 4, bailouts: 2, discarded: 6, discardedDeadObjects: 4 }, 2000),
      'per 1,000 calls 2.00 optimizing compiles, 1.00 bailouts, 3.00 optimized functions discarded ' +
        '(2.00 for embedded objects that died)',
    );
  });
});
