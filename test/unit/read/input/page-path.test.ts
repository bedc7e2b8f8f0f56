/** Dagu's Wiki page id rule, segment by segment. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_WIKI_PAGE_PATH_LENGTH, wikiPagePathProblem } from '../../../../src/read/input/page-path.ts';

test('valid page paths have no problem', () => {
  for (const path of ['notes', 'team/runbook v2', '_drafts/a.b-c', '9/x']) {
    assert.equal(wikiPagePathProblem(path), undefined, path);
  }
  assert.equal(wikiPagePathProblem('a'.repeat(MAX_WIKI_PAGE_PATH_LENGTH)), undefined);
});

test('each broken rule says which', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /must not be empty/],
    ['a'.repeat(MAX_WIKI_PAGE_PATH_LENGTH + 1), /at most 252 characters/],
    ['/lead', /empty segments/],
    ['trail/', /empty segments/],
    ['a//b', /empty segments/],
    ['.hidden', /must start with a letter, digit or underscore/],
    ['a/-x', /must start with a letter, digit or underscore/],
    ['a/b:c', /hold only letters/],
    ['a/b.', /must not end with a space or a dot/],
    ['a/b ', /must not end with a space or a dot/],
    ['con', /reserved device names/],
    ['x/LPT1.md', /reserved device names/],
    ['x/nul.txt', /reserved device names/],
  ];
  for (const [path, problem] of cases) assert.match(wikiPagePathProblem(path) ?? '', problem, path);
});

test('names that only start like a device are allowed', () => {
  assert.equal(wikiPagePathProblem('console'), undefined);
  assert.equal(wikiPagePathProblem('com10'), undefined);
});
