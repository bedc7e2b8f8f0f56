import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type BaselineEntry,
  compare,
  counts,
  leafCases,
  missingClauses,
  type Outcome,
  parseBaseline,
  parseTestEvents,
} from '../../../scripts/dagu-suite-compare.ts';
import { skipUnlessCI } from '../../support/ci.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SPEC = join(ROOT, '..', 'shared', 'spec', '021-mcp-read-tool.md');

const event = (action: string, test?: string, output?: string) =>
  JSON.stringify({
    Action: action,
    Package: 'p',
    ...(test ? { Test: test } : {}),
    ...(output ? { Output: output } : {}),
  });

const outcomes = (entries: Record<string, Outcome>) => new Map(Object.entries(entries));

const entry = (name: string): BaselineEntry => ({ case: name, kind: 'design', reason: 'r' });

describe('go test -json events', () => {
  test('outcomes per test, output per test, the package result, other lines ignored', () => {
    const run = parseTestEvents(
      [
        'go: downloading something',
        event('run', 'TestA'),
        event('output', 'TestA', '    a_test.go:3: boom\n'),
        event('fail', 'TestA/sub_one'),
        event('pass', 'TestA/sub_two'),
        event('fail', 'TestA'),
        event('skip', 'TestB'),
        '{not json',
        event('fail'),
      ].join('\n'),
    );
    assert.deepEqual(
      [...run.outcomes],
      [
        ['TestA/sub_one', 'fail'],
        ['TestA/sub_two', 'pass'],
        ['TestA', 'fail'],
        ['TestB', 'skip'],
      ],
    );
    assert.deepEqual(run.output.get('TestA'), ['    a_test.go:3: boom\n']);
    assert.equal(run.packageOutcome, 'fail');
  });

  test('leaf cases are the tests without subtests; counts per top-level test and per leaf', () => {
    const names = ['p/TestA', 'p/TestA/x', 'p/TestA/x/deep', 'p/TestA/y', 'p/TestB'];
    assert.deepEqual(leafCases(names), ['p/TestA/x/deep', 'p/TestA/y', 'p/TestB']);
    const result = counts(
      outcomes({ 'p/TestA': 'fail', 'p/TestA/x': 'pass', 'p/TestA/y': 'fail', 'p/TestB': 'pass' }),
    );
    assert.deepEqual(result, { tests: 2, testsPassed: 1, leaves: 3, leavesPassed: 2 });
  });
});

describe('comparing the gateway with Dagu', () => {
  const dagu = outcomes({ 'p/TestA': 'pass', 'p/TestA/x': 'pass', 'p/TestA/y': 'pass', 'p/TestB': 'pass' });

  test('every case passes on both: no problem', () => {
    assert.deepEqual(compare(dagu, dagu, []), { problems: [], accepted: [] });
  });

  test('a baselined failure is accepted; an unlisted one fails the run', () => {
    const gateway = outcomes({
      'p/TestA': 'fail',
      'p/TestA/x': 'fail',
      'p/TestA/y': 'pass',
      'p/TestB': 'fail',
    });
    const result = compare(dagu, gateway, [entry('p/TestA/x')]);
    assert.deepEqual(result.accepted, ['p/TestA/x']);
    assert.deepEqual(result.problems, ['gateway: p/TestB fail (not in the baseline)']);
  });

  test('a baselined case that passes now fails the run', () => {
    const result = compare(dagu, dagu, [entry('p/TestB')]);
    assert.deepEqual(result.problems, ['gateway: p/TestB passes now; remove it from the baseline']);
  });

  test('Dagu must pass every case, leaf or not', () => {
    const broken = outcomes({
      'p/TestA': 'fail',
      'p/TestA/x': 'pass',
      'p/TestA/y': 'pass',
      'p/TestB': 'skip',
    });
    const { problems } = compare(broken, dagu, []);
    assert.ok(problems.includes("Dagu's own /mcp: p/TestA fail (the reference must pass)"));
    assert.ok(problems.includes("Dagu's own /mcp: p/TestB skip (the reference must pass)"));
    assert.deepEqual(compare(new Map(), new Map(), []).problems, ["Dagu's own /mcp: no test ran"]);
  });

  test('a case that did not run on the gateway counts as failing', () => {
    const gateway = outcomes({ 'p/TestA': 'fail', 'p/TestA/x': 'pass', 'p/TestB': 'pass' });
    const { problems } = compare(dagu, gateway, []);
    assert.ok(problems.includes('gateway: p/TestA/y did not run (not in the baseline)'));
  });

  test('a parent failing with every subtest passing is a failure of its own', () => {
    const gateway = outcomes({
      'p/TestA': 'fail',
      'p/TestA/x': 'pass',
      'p/TestA/y': 'pass',
      'p/TestB': 'pass',
    });
    assert.deepEqual(compare(dagu, gateway, []).problems, [
      'gateway: p/TestA fails with no failing subtest (a failure of the test itself)',
    ]);
  });

  test('stale and non-leaf baseline entries are problems', () => {
    const gateway = outcomes({
      'p/TestA': 'fail',
      'p/TestA/x': 'fail',
      'p/TestA/y': 'pass',
      'p/TestB': 'pass',
    });
    const { problems } = compare(dagu, gateway, [entry('p/TestA/x'), entry('p/TestGone'), entry('p/TestA')]);
    assert.ok(problems.includes('baseline: p/TestGone is in neither run (renamed or removed?)'));
    assert.ok(problems.includes('baseline: p/TestA is not a leaf case; list its failing subtests instead'));
  });
});

describe('the baseline file', () => {
  test('entries need a case, a kind and a reason; contract entries quote their clause', () => {
    assert.throws(() => parseBaseline('nothing: here'), /`differences:` must be a list/);
    assert.throws(
      () => parseBaseline('differences:\n  - case: p/TestA\n    kind: contract\n    reason: r\n'),
      /quotes its clause/,
    );
    assert.throws(
      () => parseBaseline('differences:\n  - case: TestA\n    kind: design\n    reason: r\n'),
      /package/,
    );
    assert.throws(
      () =>
        parseBaseline(
          'differences:\n  - {case: p/T, kind: design, reason: r}\n  - {case: p/T, kind: design, reason: r}\n',
        ),
      /listed twice/,
    );
    assert.throws(
      () => parseBaseline('differences:\n  - {case: p/T, kind: other, reason: r, extra: 1}\n'),
      /unknown keys extra/,
    );
  });

  test('clauses are found in the spec whatever their wrapping', () => {
    const spec = 'The success text is\n`Dagu read completed.`, followed by a blank line.';
    const entries: BaselineEntry[] = [
      {
        case: 'p/A',
        kind: 'contract',
        clause: 'success text is `Dagu read completed.`, followed',
        reason: 'r',
      },
      { case: 'p/B', kind: 'contract', clause: 'not in there', reason: 'r' },
    ];
    assert.deepEqual(missingClauses(entries, spec), ['p/B: clause not found in Spec 021: "not in there"']);
  });

  test("the project's baseline parses, and its clauses are in Spec 021", {
    skip: skipUnlessCI(existsSync(SPEC) ? false : `${SPEC} is missing`),
  }, () => {
    const entries = parseBaseline(readFileSync(join(ROOT, 'test', 'dagu-suite', 'baseline.yml'), 'utf8'));
    assert.ok(entries.length > 0);
    assert.deepEqual(missingClauses(entries, readFileSync(SPEC, 'utf8')), []);
    for (const item of entries) assert.ok(item.reason.length > 20, `${item.case}: a reason worth reading`);
  });
});
