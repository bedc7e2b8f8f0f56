import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TargetHandler } from '../../../src/read/handler.ts';
import { createReadService } from '../../../src/read/service.ts';
import { fakeDagu, NO_WORKBOOK, OPEN } from '../../support/read-deps.ts';

/** Input-layer rules as the read service reports them (the service adds error context). */

const unreachable: TargetHandler = async () => {
  throw new Error('input errors must stop before any handler runs');
};
const deps = { dagu: fakeDagu(2, () => ({ status: 500, body: undefined })), workbook: NO_WORKBOOK };
const service = createReadService(deps, {
  dag_spec: unreachable,
  run: unreachable,
  step_log: unreachable,
  reference: unreachable,
  wiki: unreachable,
});

describe('a path-segment value of . or .. through the service', () => {
  test('resource_not_found with target and field and no uri', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ target: 'dag_spec', name: '..' }, 'name', 'The DAG ".." does not exist.'],
      [{ target: 'run', name: 'n', dagRunId: '.' }, 'dagRunId', 'The DAG-run "." does not exist.'],
      [
        { target: 'step_log', name: 'n', dagRunId: 'r', stepName: '..' },
        'stepName',
        'The step ".." does not exist.',
      ],
      [{ target: 'reference', name: '..' }, 'name', 'The reference topic ".." does not exist.'],
      [{ target: 'wiki', workspace: '.' }, 'workspace', 'The workspace "." does not exist.'],
    ];
    for (const [args, field, message] of cases) {
      const outcome = await service.read(args, OPEN);
      assert.equal(outcome.ok, false);
      if (outcome.ok) continue;
      assert.deepEqual(outcome.error, {
        code: 'resource_not_found',
        message,
        target: args.target,
        field,
      });
    }
  });
});
