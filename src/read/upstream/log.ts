import { readError } from '../errors.ts';

/** One log stream as Dagu's `Log` schema describes it, with absent counters defaulted. */
export interface LogPart {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
  /** Dagu estimates `totalLines` for large files and says so. */
  isEstimate: boolean;
}

export const EMPTY_LOG: Readonly<LogPart> = Object.freeze({
  content: '',
  lineCount: 0,
  totalLines: 0,
  hasMore: false,
  isEstimate: false,
});

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

/**
 * Reads Dagu's `Log` body: `content` is required; an empty file answers `{content: ""}` without
 * counters. An estimated total never reads as fewer lines than were returned.
 */
export function parseLogBody(body: unknown): LogPart {
  const log =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  if (typeof log.content !== 'string') {
    throw readError.internal('Dagu answered a log read with a body that has no log content.');
  }
  const lineCount = count(log.lineCount);
  return {
    content: log.content,
    lineCount,
    totalLines: Math.max(count(log.totalLines), lineCount),
    hasMore: log.hasMore === true,
    isEstimate: log.isEstimate === true,
  };
}
