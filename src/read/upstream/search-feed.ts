import type { ReadError } from '../errors.ts';
import { isRecord, type Json, optionalText } from './bodies.ts';

/**
 * Dagu 2.x's search feeds (`DAGSearchFeedResponse`, `WikiPageSearchFeedResponse`) as the contract's
 * search model: each result through `mapResult` (which answers `undefined` for one the caller may not
 * see), its `nextMatchesCursor` when Dagu gives one, then `hasMore` and `nextCursor` as Dagu pages them.
 */
export function mapSearchFeed(
  body: unknown,
  malformed: (what: string) => ReadError,
  mapResult: (raw: unknown) => Json | undefined,
): Json {
  if (!isRecord(body)) throw malformed('not an object');
  const rawResults = body.results ?? [];
  if (!Array.isArray(rawResults)) throw malformed('results is not an array');
  const results: Json[] = [];
  for (const raw of rawResults) {
    const result = mapResult(raw);
    if (result === undefined) continue;
    const nextMatchesCursor = isRecord(raw) ? optionalText(raw.nextMatchesCursor) : undefined;
    if (nextMatchesCursor !== undefined) result.nextMatchesCursor = nextMatchesCursor;
    results.push(result);
  }
  const data: Json = { results, hasMore: body.hasMore === true };
  const nextCursor = optionalText(body.nextCursor);
  if (nextCursor !== undefined) data.nextCursor = nextCursor;
  return data;
}
