import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TargetHandler } from '../../../src/read/definition.ts';
import { readError } from '../../../src/read/errors.ts';
import { createReadService } from '../../../src/read/service.ts';
import { depsOf, fakeDagu, OPEN } from '../../support/read-deps.ts';

/** A handler that always fails naming some URI of its own, as a handler may. */
const failing: TargetHandler = async () => {
  throw readError.notFound('gone', { uri: 'dagu://somewhere/else' });
};
const crashing: TargetHandler = async () => {
  throw new TypeError('boom at /srv/secret/path');
};
const deps = depsOf(fakeDagu(2, () => ({ status: 500, body: undefined })));
const service = createReadService(deps, { wiki: failing, run: failing, runs: failing, dag: crashing });

describe('the error uri rule is applied once, by the service', () => {
  test('target mode, collection: no uri', async () => {
    for (const target of ['wiki', 'runs']) {
      const outcome = await service.read({ target }, OPEN);
      assert.equal(outcome.ok, false);
      if (!outcome.ok)
        assert.deepEqual(outcome.error, { code: 'resource_not_found', message: 'gone', target });
    }
  });

  test('target mode, singular resource: the resolved URI', async () => {
    const outcome = await service.read({ target: 'run', name: 'n', dagRunId: 'r' }, OPEN);
    assert.equal(outcome.ok ? undefined : outcome.error.uri, 'dagu://runs/n/r');
  });

  test('URI mode: the trimmed URI as supplied', async () => {
    const outcome = await service.read({ uri: '  dagu://runs?limit=5 ' }, OPEN);
    assert.equal(outcome.ok ? undefined : outcome.error.uri, 'dagu://runs?limit=5');
    assert.equal(outcome.ok ? undefined : outcome.error.target, 'runs');
  });

  test('an unexpected failure is internal_error without its message, the cause kept for the log', async () => {
    const outcome = await service.read({ target: 'dag', name: 'x' }, OPEN);
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.error.code, 'internal_error');
    assert.doesNotMatch(outcome.error.message, /boom|\/srv/);
    assert.ok(outcome.cause instanceof TypeError);
    assert.equal(outcome.facts.target, 'dag');
  });

  test('a target with no handler is resource_unavailable', async () => {
    const outcome = await service.read({ target: 'dag_search', search: 'x' }, OPEN);
    assert.equal(outcome.ok ? undefined : outcome.error.code, 'resource_unavailable');
  });
});
