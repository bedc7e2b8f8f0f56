/**
 * Argument completion (src/read/completion.ts) over a scripted read service: which reads it makes as
 * the caller, how it filters, cuts and counts what they return, the query names and values it offers
 * from the query table, and how failed reads become no suggestions or the read's own error. The MCP
 * side against a real Dagu is test/integration/mcp/completion.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AccessPolicy } from '../../../src/core/access.ts';
import type { ErrorCode, ReadTarget } from '../../../src/core/contract.ts';
import { type CompletionRequest, createCompletionService } from '../../../src/read/completion.ts';
import type { ReadOutcome, ReadService } from '../../../src/read/service.ts';
import { REFERENCE_TOPICS } from '../../../src/reference/topics.ts';
import { OPEN } from '../../support/read-deps.ts';

type Args = Record<string, unknown>;
const ok = (data: Record<string, unknown>): ReadOutcome => ({
  ok: true,
  envelope: { target: 'dags', data, references: [] },
  facts: { target: 'dags' },
});
const failed = (code: ErrorCode): ReadOutcome => ({
  ok: false,
  error: { code, message: `failed: ${code}` },
  facts: { target: 'run' },
});

/** A read service answering by target, recording the arguments of every read. */
function scripted(answers: Partial<Record<ReadTarget, (args: Args) => ReadOutcome>>) {
  const reads: Args[] = [];
  const service: ReadService = {
    async read(raw) {
      const args = raw as Args;
      reads.push(args);
      const answer = answers[args.target as ReadTarget];
      return answer === undefined ? assert.fail(`unexpected read of ${String(args.target)}`) : answer(args);
    },
    readUri: () => assert.fail('no URI read expected'),
  };
  return { reads, completions: createCompletionService(service) };
}

const fieldRequest = (
  field: Extract<CompletionRequest, { kind: 'field' }>['field'],
  value: string,
  context: Record<string, string> = {},
): CompletionRequest => ({ kind: 'field', field, value, context });

async function values(
  completions: ReturnType<typeof createCompletionService>,
  request: CompletionRequest,
  limit = 100,
  call = OPEN,
) {
  const outcome = await completions.complete(request, call, limit);
  assert.ok(outcome.ok, JSON.stringify(outcome));
  return outcome.completion;
}

describe('field completion', () => {
  test('name: asks Dagu for the prefix, keeps names that start with it (any case), cuts at the limit', async () => {
    const { reads, completions } = scripted({
      dags: () =>
        ok({ items: [{ name: 'ETL-daily' }, { name: 'my-etl' }, { name: 'etl-hourly' }, { x: 1 }] }),
    });
    assert.deepEqual(await values(completions, fieldRequest('name', 'etl')), {
      values: ['ETL-daily', 'etl-hourly'],
      hasMore: false,
      total: 2,
    });
    assert.deepEqual(reads, [{ target: 'dags', query: 'name=etl&perPage=200' }]);
    assert.deepEqual(await values(completions, fieldRequest('name', 'etl'), 1), {
      values: ['ETL-daily'],
      hasMore: true,
      total: 2,
    });
    await values(completions, fieldRequest('name', ''));
    assert.deepEqual(reads.at(-1), { target: 'dags', query: 'perPage=200' });
  });

  test('name: more pages in Dagu means more suggestions exist and no total is given', async () => {
    const { completions } = scripted({
      dags: () => ok({ items: [{ name: 'a' }], pagination: { totalPages: 3 } }),
    });
    assert.deepEqual(await values(completions, fieldRequest('name', '')), { values: ['a'], hasMore: true });
  });

  test('dagRunId: latest then the DAG own runs; nothing without a name; more behind a cursor', async () => {
    const { reads, completions } = scripted({
      runs: () =>
        ok({
          items: [
            { name: 'etl', dagRunId: 'r2' },
            { name: 'etl-other', dagRunId: 'x1' },
            { name: 'etl', dagRunId: 'r1' },
          ],
          nextCursor: 'c',
        }),
    });
    assert.deepEqual(await values(completions, fieldRequest('dagRunId', '', {})), {
      values: [],
      hasMore: false,
      total: 0,
    });
    assert.equal(reads.length, 0);
    assert.deepEqual(await values(completions, fieldRequest('dagRunId', '', { name: 'etl' })), {
      values: ['latest', 'r2', 'r1'],
      hasMore: true,
    });
    assert.deepEqual(reads, [{ target: 'runs', query: 'name=etl&limit=100' }]);
    assert.deepEqual((await values(completions, fieldRequest('dagRunId', 'R', { name: 'etl' }))).values, [
      'r2',
      'r1',
    ]);
  });

  test('stepName and subRunId: from the run steps; sub runs from the root run, each once', async () => {
    const steps = [
      { name: 'extract', subRuns: [{ dagRunId: 's1' }, { dagRunId: 's2' }] },
      { name: 'load', subRuns: [{ dagRunId: 's1' }] },
    ];
    const { reads, completions } = scripted({ run: () => ok({ steps }) });
    assert.deepEqual((await values(completions, fieldRequest('stepName', 'l', { name: 'etl' }))).values, [
      'load',
    ]);
    assert.deepEqual(reads.at(-1), { target: 'run', name: 'etl', dagRunId: 'latest' });
    const sub = await values(
      completions,
      fieldRequest('subRunId', '', { name: 'etl', dagRunId: 'r1', subRunId: 's9' }),
    );
    assert.deepEqual(sub, { values: ['s1', 's2'], hasMore: false, total: 2 });
    assert.deepEqual(reads.at(-1), { target: 'run', name: 'etl', dagRunId: 'r1' });
    await values(completions, fieldRequest('stepName', '', { name: 'etl', dagRunId: 'r1', subRunId: 's1' }));
    assert.deepEqual(reads.at(-1), { target: 'run', name: 'etl', dagRunId: 'r1', subRunId: 's1' });
  });

  test('workspace: default and every workspace of the DAGs and the wiki the caller may read; a failing wiki is left out', async () => {
    const { completions } = scripted({
      dags: () =>
        ok({
          items: [{ labels: ['workspace=ops'] }, { labels: ['workspace=hidden', 'team=x'] }, { labels: [] }],
        }),
      wiki: () => ok({ items: [{ workspace: 'docs' }, { workspace: 'ops' }] }),
    });
    const access: AccessPolicy = {
      canReadDag: () => true,
      canReadWorkspace: (workspace) => workspace !== 'hidden',
      readsWorkbooks: false,
      unrestricted: false,
      everyWorkspace: false,
      exactWorkspaces: undefined,
    };
    assert.deepEqual((await values(completions, fieldRequest('workspace', ''), 100, { access })).values, [
      'default',
      'ops',
      'docs',
    ]);
    // Workspaces the grants name are offered even when no DAG or page of theirs is listed.
    const granted = { ...access, exactWorkspaces: ['granted'] };
    assert.deepEqual(
      (await values(completions, fieldRequest('workspace', ''), 100, { access: granted })).values,
      ['default', 'granted', 'ops', 'docs'],
    );
    const withoutWiki = scripted({
      dags: () => ok({ items: [{ labels: ['workspace=ops'] }] }),
      wiki: () => failed('resource_unavailable'),
    });
    assert.deepEqual((await values(withoutWiki.completions, fieldRequest('workspace', 'o'))).values, ['ops']);
  });

  test('path: the wiki page ids of the chosen workspace, nothing without one; topic: the reference topics', async () => {
    const { reads, completions } = scripted({
      wiki: () => ok({ items: [{ id: 'guides/setup' }, { id: 'runbook' }], pagination: { totalPages: 1 } }),
    });
    assert.deepEqual((await values(completions, fieldRequest('path', '', {}))).values, []);
    assert.equal(reads.length, 0);
    assert.deepEqual((await values(completions, fieldRequest('path', 'g', { workspace: 'ops' }))).values, [
      'guides/setup',
    ]);
    assert.deepEqual(reads, [{ target: 'wiki', workspace: 'ops', query: 'flat=true&perPage=200' }]);
    const topics = await values(completions, fieldRequest('topic', ''));
    assert.deepEqual(
      topics.values,
      REFERENCE_TOPICS.map((topic) => topic.name),
    );
  });

  test('a read that finds nothing the caller may see suggests nothing; any other failure is the read own outcome', async () => {
    const notFound = scripted({ run: () => failed('resource_not_found') });
    assert.deepEqual(await values(notFound.completions, fieldRequest('stepName', '', { name: 'gone' })), {
      values: [],
      total: 0,
      hasMore: false,
    });
    const denied = scripted({ run: () => failed('unauthorized') });
    assert.deepEqual(
      (await values(denied.completions, fieldRequest('stepName', '', { name: 'secret' }))).values,
      [],
    );
    const down = failed('resource_unavailable');
    const unavailable = scripted({ run: () => down });
    assert.equal(
      await unavailable.completions.complete(fieldRequest('stepName', '', { name: 'etl' }), OPEN, 10),
      down,
    );
  });
});

describe('query completion', () => {
  const { completions } = scripted({});

  test('names: the parameters not given yet, after what was typed; repeatable ones stay; none for a target without a query', async () => {
    assert.deepEqual(
      (await values(completions, { kind: 'queryName', target: 'step_log', value: 'tail=5&s' })).values,
      ['tail=5&stream='],
    );
    const runs = await values(completions, { kind: 'queryName', target: 'runs', value: 'status=1&' });
    assert.ok(runs.values.includes('status=1&status='), 'status is repeatable');
    assert.ok(runs.values.includes('status=1&limit='));
    assert.ok(!runs.values.some((value) => value === 'status=1&'));
    assert.deepEqual((await values(completions, { kind: 'queryName', target: 'dag', value: '' })).values, []);
  });

  test('values: a closed set, or a short integer range; nothing for an open one', async () => {
    assert.deepEqual(
      (await values(completions, { kind: 'queryValue', target: 'step_log', param: 'stream', value: '' }))
        .values,
      ['stdout', 'stderr'],
    );
    assert.deepEqual(
      (await values(completions, { kind: 'queryValue', target: 'runs', param: 'status', value: '' })).values,
      ['0', '1', '2', '3', '4', '5', '6', '7', '8'],
    );
    assert.deepEqual(
      (await values(completions, { kind: 'queryValue', target: 'dags', param: 'order', value: 'D' })).values,
      ['desc'],
    );
    assert.deepEqual(
      (await values(completions, { kind: 'queryValue', target: 'dags', param: 'perPage', value: '' })).values,
      [],
    );
    assert.deepEqual(
      (await values(completions, { kind: 'queryValue', target: 'dags', param: 'nope', value: '' })).values,
      [],
    );
  });
});
