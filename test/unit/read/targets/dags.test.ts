import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dagListItem, latestRunOf, paginationOf } from '../../../../src/read/targets/dags.ts';
import { LOGS, summary2x } from '../../../support/dagu2-bodies.ts';

describe('dags mapping (Dagu 2.x DAGFile shape)', () => {
  it('builds list items with name, spec URI, suspended and extras', () => {
    const item = dagListItem({
      fileName: 'nightly.report',
      dag: {
        name: 'nightly.report',
        workspace: 'ops',
        description: 'Nightly numbers',
        labels: ['team-a', 'nightly'],
        tags: ['legacy'],
        schedule: [{ expression: '0 1 * * *', kind: 'cron' }],
      },
      latestDAGRun: summary2x,
      nextRun: '2026-07-02T01:00:00Z',
      suspended: true,
      errors: null,
    });
    assert.deepEqual(item, {
      name: 'nightly.report',
      uri: 'dagu://dags/nightly.report/spec',
      suspended: true,
      description: 'Nightly numbers',
      labels: ['team-a', 'nightly'],
      schedule: ['0 1 * * *'],
      latestRun: {
        dagRunId: '20260701T010000Z',
        status: 4,
        statusLabel: 'succeeded',
        startedAt: '2026-07-01T01:00:05.000Z',
        finishedAt: '2026-07-01T01:02:00.000Z',
      },
      nextRun: '2026-07-02T01:00:00.000Z',
    });
  });

  it('omits latestRun for a DAG that never ran (zero DAGRunSummary)', () => {
    assert.equal(
      latestRunOf({
        dagRunId: '',
        name: 'x',
        status: 0,
        statusLabel: 'not_started',
        startedAt: '',
        finishedAt: '',
      }),
      undefined,
    );
    const item = dagListItem({
      fileName: 'x y',
      dag: { name: 'x y' },
      latestDAGRun: { dagRunId: '' },
      suspended: false,
      errors: [`bad ${LOGS}/x`],
    });
    assert.equal(item.uri, 'dagu://dags/x%20y/spec');
    assert.equal(item.latestRun, undefined);
    assert.deepEqual(item.errors, ['bad <path>']);
  });

  it('keeps the five pagination numbers and rejects a malformed pagination', () => {
    assert.deepEqual(
      paginationOf({ totalRecords: 3, currentPage: 1, totalPages: 1, nextPage: 1, prevPage: 1, extra: 1 }),
      {
        totalRecords: 3,
        currentPage: 1,
        totalPages: 1,
        nextPage: 1,
        prevPage: 1,
      },
    );
    assert.throws(() => paginationOf({ totalRecords: '3' }), { code: 'internal_error' });
  });
});
