import type { CacheSlice } from '../../core/byte-lru.ts';
import type { RunRef } from '../uri-shapes.ts';
import type { LogPart } from './log.ts';

/**
 * What of a step log cannot change, and how to tell (Dagu 2.x; facts from its v2.15.1 source):
 * - every execution of a step writes its stdout and stderr to files of its own, in the folder of its
 *   attempt (`…/run_<time>_<attemptId>/<step>.<time>.<run>.out`); a retry of the run or of the step
 *   is a new attempt whose re-run steps get new files, while steps it does not re-run keep theirs;
 * - once the step is done and the run is finished, Dagu never writes that file again;
 * - the step-log route reads the file of the run's *latest* attempt.
 * So a log window is cached under the file it was read from, and used only when the run's details,
 * read in the same call, still name that file (the protocol: `cached-log.ts`) for a done step of a finished run. Nothing is kept for a
 * running step, a run that may still change on its own, or a run addressed as `latest` before it was
 * resolved. The scheduler log is not: a retry appends to the same file.
 */

export type LogStream = 'stdout' | 'stderr';

/** The files a finished step's streams were written to, per the run's details (absent: not cacheable). */
export type FinishedLogFiles = Partial<Record<LogStream, string>>;

/** The cache key of one log window: the file, the stream and the positioning sent to Dagu. */
export const logWindowKey = (file: string, stream: LogStream, positioning: ReadonlyArray<[string, string]>) =>
  `${stream}\u0000${file}\u0000${positioning.map(([key, value]) => `${key}=${value}`).join('&')}`;

/** Bytes a cached log window takes (UTF-16 text and the counters). */
export const logPartBytes = (part: LogPart) => part.content.length * 2 + 64;

/** How long a run seen unfinished has its logs read without the details check (it costs a request). */
const UNFINISHED_HINT_MS = 5000;
const MAX_HINTS = 10_000;

/**
 * Finished step-log windows, shared by all callers, and a hint of which runs were seen unfinished: a
 * run being watched while it runs is read as without a cache (no details request) for a few seconds
 * at a time. The hint only saves requests; what is served comes from the checks in `finishedLogFiles`.
 */
export class FinishedLogCache {
  readonly #unfinished = new Map<string, number>();

  constructor(readonly windows: CacheSlice<LogPart>) {}

  /** Whether to read the run's details first: not while the run was seen unfinished moments ago. */
  worthChecking(run: RunRef): boolean {
    const seen = this.#unfinished.get(runKey(run));
    if (seen === undefined) return true;
    if (performance.now() - seen < UNFINISHED_HINT_MS) return false;
    this.#unfinished.delete(runKey(run));
    return true;
  }

  noteUnfinished(run: RunRef): void {
    if (this.#unfinished.size >= MAX_HINTS) this.#unfinished.clear();
    this.#unfinished.set(runKey(run), performance.now());
  }
}

const runKey = (run: RunRef) => `${run.name}\u0000${run.dagRunId}\u0000${run.subRunId ?? ''}`;
