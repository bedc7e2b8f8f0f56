/**
 * The one way a test may skip: `skipUnlessCI(reason)` gives the `skip` option (or the reason for
 * `t.skip`) on a developer's machine that lacks a tool, and throws under CI (`isCI()`, scripts/ci.mjs),
 * so a missing tool or contract fails the run there instead of passing it quietly.
 * test/unit/scripts/skips.test.ts fails on any other skip in test/.
 */
import { isCI } from '../../scripts/ci.mjs';

export { isCI };

/** `reason` when not under CI (a test skips with it); `false` when there is nothing to skip for. */
export function skipUnlessCI(reason: string): string;
export function skipUnlessCI(reason: string | undefined | false): string | false;
export function skipUnlessCI(reason: string | undefined | false): string | false {
  if (reason === undefined || reason === false) return false;
  if (isCI()) throw new Error(`CI: this would skip, and under CI a skip is a failure: ${reason}`);
  return reason;
}
