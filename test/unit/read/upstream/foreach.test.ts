/**
 * explainMissingForeachRoutes (src/read/upstream/foreach.ts): on a Dagu without foreach routes, what a
 * foreach read is answered, established from the run details alone. The handlers around it are tested
 * in test/unit/read/targets/foreach.test.ts; this covers the function's own results.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DaguRequest, DaguResponse } from '../../../../src/dagu/types.ts';
import { explainMissingForeachRoutes } from '../../../../src/read/upstream/foreach.ts';
import type { ReadScope } from '../../../../src/read/upstream/scope.ts';
import { withoutForeachRoutes } from '../../../support/dagu-without-foreach-routes.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

const RUN = { name: 'fan', dagRunId: 'r1' };

function scopeOf(generation: 1 | 2, responder: (request: DaguRequest) => DaguResponse, call = OPEN) {
  const dagu = fakeDagu(generation, responder);
  const scope: ReadScope = {
    request: { mode: 'target', target: 'foreach_items', fields: { ...RUN, stepName: 'each' } },
    deps: depsOf(dagu),
    call,
  };
  return { dagu, scope };
}

/** Run details of RUN whose one node is `node`. */
const detailsWith =
  (node: Record<string, unknown>) =>
  (request: DaguRequest): DaguResponse => {
    assert.equal(request.route, '/dag-runs/{name}/{dagRunId}');
    return { status: 200, body: { dagRunDetails: { ...RUN, status: 4, nodes: [node] } } };
  };

describe('explainMissingForeachRoutes', () => {
  test('a foreach step: resource_unavailable with what Dagu does report, after one request (the run details)', async () => {
    const { dagu, scope } = scopeOf(2, withoutForeachRoutes(RUN));
    const error = await explainMissingForeachRoutes(scope, RUN, 'each');
    assert.equal(error.code, 'resource_unavailable');
    assert.match(
      error.message,
      /it reports only its status \(succeeded\) and doneCount 3\. Reading foreach items/,
    );
    assert.deepEqual(
      dagu.calls.map((call) => call.route),
      ['/dag-runs/{name}/{dagRunId}'],
    );
  });

  test('names only what the node carries: the status alone, doneCount alone, or nothing', async () => {
    const foreach = { type: 'foreach' };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ statusLabel: 'running' }, /; it reports only its status \(running\)\. /],
      [{ doneCount: 2 }, /; it reports only doneCount 2\. /],
      [{}, /GET …\/steps\/\{stepName\}\/foreach…\)\. Reading/],
    ];
    for (const [extra, expected] of cases) {
      const { scope } = scopeOf(
        2,
        detailsWith({ step: { name: 'each', executorConfig: foreach }, ...extra }),
      );
      const error = await explainMissingForeachRoutes(scope, RUN, 'each');
      assert.equal(error.code, 'resource_unavailable');
      assert.match(error.message, expected);
    }
  });

  test('an unknown step and a plain step are resource_not_found, returned not thrown', async () => {
    const { scope } = scopeOf(2, withoutForeachRoutes(RUN));
    const unknown = await explainMissingForeachRoutes(scope, RUN, 'nope');
    assert.equal(unknown.code, 'resource_not_found');
    assert.equal(unknown.message, 'Step "nope" does not exist in DAG-run "r1" of DAG "fan".');
    const plain = await explainMissingForeachRoutes(scope, RUN, 'plain');
    assert.equal(plain.code, 'resource_not_found');
    assert.equal(
      plain.message,
      'Step "plain" of DAG-run "r1" of DAG "fan" is not a foreach step: it has no foreach items.',
    );
  });

  test('on Dagu 1.x a step that is not a foreach step says the generation has none', async () => {
    const { scope } = scopeOf(1, withoutForeachRoutes(RUN));
    const error = await explainMissingForeachRoutes(scope, RUN, 'plain');
    assert.match(error.message, /is not a foreach step \(the connected Dagu 1\.x has no foreach steps\)/);
  });

  test('an unknown run is thrown as resource_not_found; a DAG the caller may not read, before any request', async () => {
    const { scope } = scopeOf(2, withoutForeachRoutes(RUN));
    await rejectsWith(
      explainMissingForeachRoutes(scope, { ...RUN, dagRunId: 'r2' }, 'each'),
      'resource_not_found',
    );
    const denied = scopeOf(2, withoutForeachRoutes(RUN), {
      access: {
        canReadDag: () => false,
        canReadWorkspace: () => true,
        readsWorkbooks: true,
        unrestricted: false,
        everyWorkspace: true,
        exactWorkspaces: undefined,
      },
    });
    await rejectsWith(explainMissingForeachRoutes(denied.scope, RUN, 'each'), 'unauthorized');
    assert.equal(denied.dagu.calls.length, 0);
  });
});
