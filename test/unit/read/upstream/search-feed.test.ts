/** Dagu 2.x search feeds as the contract's search model. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { malformedBody } from '../../../../src/read/upstream/bodies.ts';
import { mapSearchFeed } from '../../../../src/read/upstream/search-feed.ts';

const malformed = (what: string) => malformedBody('the DAG search', what);
/** Keeps results with a string name, as `{name}`; drops the rest (what a caller may not see). */
const byName = (raw: unknown) => {
  const name = (raw as { name?: unknown }).name;
  return typeof name === 'string' && name !== 'hidden' ? { name } : undefined;
};

test('results mapped in order; hidden ones dropped; cursors kept where Dagu gives them', () => {
  assert.deepEqual(
    mapSearchFeed(
      {
        results: [
          { name: 'a', nextMatchesCursor: 'm1' },
          { name: 'hidden' },
          { name: 'b', nextMatchesCursor: '' },
        ],
        hasMore: true,
        nextCursor: 'c2',
      },
      malformed,
      byName,
    ),
    { results: [{ name: 'a', nextMatchesCursor: 'm1' }, { name: 'b' }], hasMore: true, nextCursor: 'c2' },
  );
});

test('absent or null results are an empty page; hasMore is true only when Dagu says true', () => {
  assert.deepEqual(mapSearchFeed({}, malformed, byName), { results: [], hasMore: false });
  assert.deepEqual(mapSearchFeed({ results: null, hasMore: 'yes' }, malformed, byName), {
    results: [],
    hasMore: false,
  });
});

test('a body that is not an object, or results that are not an array, is malformed', () => {
  assert.throws(() => mapSearchFeed([], malformed, byName), /the DAG search .*\(not an object\)/);
  assert.throws(() => mapSearchFeed({ results: {} }, malformed, byName), /\(results is not an array\)/);
});
