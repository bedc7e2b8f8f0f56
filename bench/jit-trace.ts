// What V8's `--trace-opt` and `--trace-deopt` lines say about a stretch of a process's output:
// bench:profile's PROFILE_JIT cell. `compiling method` starts one optimizing compile (TurboFan; also
// Maglev on Node 22 and later), which runs on a helper thread. `bailout` is running optimized code
// falling back to the interpreter. `marking dependent code` throws optimized code away: at a full
// collection when objects the code embedded have died (`weak objects` on Node 20, `embedded weak objects
// cleared` on Node 24), or when an assumption it was compiled under no longer holds.

export interface JitTotals {
  compiles: number;
  bailouts: number;
  discarded: number;
  /** Of `discarded`: code thrown away at a collection because objects it embedded died. */
  discardedDeadObjects: number;
}

const COMPILE = /^\[compiling method /;
const BAILOUT = /^\[bailout \(kind: /;
const DISCARDED = /^\[marking dependent code .*reason: (.*)\]$/;

export function jitTotals(text: string): JitTotals {
  const totals: JitTotals = { compiles: 0, bailouts: 0, discarded: 0, discardedDeadObjects: 0 };
  for (const line of text.split('\n')) {
    if (COMPILE.test(line)) totals.compiles += 1;
    else if (BAILOUT.test(line)) totals.bailouts += 1;
    else {
      const discarded = DISCARDED.exec(line);
      if (discarded === null) continue;
      totals.discarded += 1;
      if (discarded[1]!.includes('weak objects')) totals.discardedDeadObjects += 1;
    }
  }
  return totals;
}

const perThousand = (count: number, calls: number) => ((count * 1000) / calls).toFixed(2);

export const jitLine = (totals: JitTotals, calls: number) =>
  `per 1,000 calls ${perThousand(totals.compiles, calls)} optimizing compiles, ` +
  `${perThousand(totals.bailouts, calls)} bailouts, ${perThousand(totals.discarded, calls)} optimized ` +
  `functions discarded (${perThousand(totals.discardedDeadObjects, calls)} for embedded objects that died)`;
