import { isDoneStep, isFinishedRun } from '../status.ts';
import type { RunRef } from '../uri-shapes.ts';
import { isRecord } from './bodies.ts';
import { fetchAny } from './fetch.ts';
import {
  type FinishedLogCache,
  type FinishedLogFiles,
  type LogStream,
  logPartBytes,
  logWindowKey,
} from './finished-logs.ts';
import type { LogPart } from './log.ts';
import { runRoute } from './runs.ts';
import type { ReadScope } from './scope.ts';

/**
 * The log files of step `stepName` when the run (already resolved, never `latest`) is finished and the
 * step done; `undefined` when they may still change or the details cannot be read (the log read that
 * follows then reports what is wrong, exactly as without a cache). One request: the run's details.
 */
export async function finishedLogFiles(
  scope: ReadScope,
  cache: FinishedLogCache,
  run: RunRef,
  stepName: string,
): Promise<FinishedLogFiles | undefined> {
  const route = runRoute(run);
  const response = await fetchAny(scope, { route: route.prefix, params: route.params });
  if (response.status !== 200 || !isRecord(response.body)) return undefined;
  const details = response.body.dagRunDetails;
  if (!isRecord(details) || !Array.isArray(details.nodes)) return undefined;
  const node = details.nodes.find(
    (candidate) => isRecord(candidate) && isRecord(candidate.step) && candidate.step.name === stepName,
  );
  if (!isFinishedRun(details.status) || !isRecord(node) || !isDoneStep(node.status)) {
    cache.noteUnfinished(run);
    return undefined;
  }
  const files: FinishedLogFiles = {};
  for (const stream of ['stdout', 'stderr'] as const) {
    const file = node[stream];
    if (typeof file === 'string' && file !== '') files[stream] = file;
  }
  return files;
}

/** One stream's window as Dagu answered it; `fresh` when it is a window worth keeping (HTTP 200). */
export interface LogWindowAnswer {
  part: LogPart;
  status: number;
  fresh: boolean;
}

export interface CachedLogRead {
  /** The cache, when this read may use it (a root or child step of a Dagu that writes logs per attempt). */
  cache: FinishedLogCache | undefined;
  /** The run, resolved (never `latest`). */
  run: RunRef;
  stepName: string;
  streams: readonly LogStream[];
  positioning: ReadonlyArray<[string, string]>;
}

/**
 * The streams' windows, each from the cache or from Dagu (`readFromDagu`): the run's details are read
 * before, to know which files are current, and again after a window was read from Dagu, which is kept
 * only if the details still name the same file (the log route reads the latest attempt, and a retry
 * that started in between would name another one). A failure of that second check keeps nothing but
 * does not fail the read.
 */
export async function readLogWindows(
  scope: ReadScope,
  read: CachedLogRead,
  readFromDagu: (stream: LogStream) => Promise<LogWindowAnswer>,
): Promise<Array<{ part: LogPart; status: number }>> {
  const { cache } = read;
  const checkFiles = cache?.worthChecking(read.run)
    ? () => finishedLogFiles(scope, cache, read.run, read.stepName)
    : undefined;
  const before = await checkFiles?.();
  const fresh: Array<{ stream: LogStream; key: string; part: LogPart }> = [];
  const answers = await Promise.all(
    read.streams.map(async (stream) => {
      const file = before?.[stream];
      const key = file === undefined ? undefined : logWindowKey(file, stream, read.positioning);
      const cached = key === undefined ? undefined : cache?.windows.get(key);
      if (cached !== undefined) return { part: cached, status: 200 };
      const answer = await readFromDagu(stream);
      if (answer.fresh && key !== undefined) fresh.push({ stream, key, part: answer.part });
      return { part: answer.part, status: answer.status };
    }),
  );
  if (fresh.length > 0 && cache !== undefined && checkFiles !== undefined) {
    const after = await checkFiles().catch(() => undefined);
    for (const { stream, key, part } of fresh) {
      if (after?.[stream] === before?.[stream]) cache.windows.set(key, part, logPartBytes(part));
    }
  }
  return answers;
}
