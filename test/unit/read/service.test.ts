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

/** Input-layer rules as the read service reports them (the service adds error context). */

const unreachable: TargetHandler = async () => {
  throw new Error('input errors must stop before any handler runs');
};
const inputService = createReadService(deps, {
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
      const outcome = await inputService.read(args, OPEN);
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

describe('readUri (resources/read) of an empty URI', () => {
  for (const uri of ['', '   ', '\t\n']) {
    test(`${JSON.stringify(uri)} is invalid_resource_uri on uri, not a missing addressing mode`, async () => {
      const outcome = await inputService.readUri(uri, OPEN);
      assert.equal(outcome.ok, false);
      if (outcome.ok) return;
      assert.deepEqual(outcome.error, {
        code: 'invalid_resource_uri',
        message: 'The uri must not be empty; give a dagu:// resource URI.',
        field: 'uri',
      });
    });
  }

  test('a dagu_read call without target or uri is still invalid_tool_input', async () => {
    const outcome = await inputService.read({ uri: '  ' }, OPEN);
    assert.equal(outcome.ok ? undefined : outcome.error.code, 'invalid_tool_input');
  });

  test('a non-empty uri is read in URI mode as before (trimmed)', async () => {
    const outcome = await inputService.readUri(' dagu://dags/x/spec ', OPEN);
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.error.code, 'internal_error'); // the unreachable handler ran: the URI resolved
    assert.equal(outcome.error.uri, 'dagu://dags/x/spec');
  });
});

describe('echo fields follow what the caller supplied, not defaults', () => {
  const data: TargetHandler = async () => ({ data: {} });
  const echoing = createReadService(deps, { wiki: data, wiki_page: data, step_log: data });

  async function envelope(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const outcome = await echoing.read(args, OPEN);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    return outcome.ok ? outcome.envelope : {};
  }

  test('wiki without workspace does not echo the default workspace all', async () => {
    const target = await envelope({ target: 'wiki' });
    assert.equal('workspace' in target, false);
    const uri = await envelope({ uri: 'dagu://wiki?flat=true' });
    assert.equal('workspace' in uri, false);
  });

  test('a workspace the caller gave is echoed, all included', async () => {
    assert.equal((await envelope({ target: 'wiki', workspace: 'all' })).workspace, 'all');
    assert.equal((await envelope({ target: 'wiki', workspace: ' ops ', prefix: 'a' })).workspace, 'ops');
    assert.equal((await envelope({ target: 'wiki', workspace: 'ops', prefix: 'a' })).prefix, 'a');
    assert.equal((await envelope({ uri: 'dagu://wiki/ops' })).workspace, 'ops');
    const page = await envelope({ uri: 'dagu://wiki/ops/guides/deploy' });
    assert.equal(page.workspace, 'ops');
    assert.equal(page.path, 'guides/deploy');
  });

  test('step_log echoes its address in both modes', async () => {
    const expected = { name: 'n', dagRunId: 'r', subRunId: 'c', stepName: 's', item: '0', bodyStepName: 'b' };
    const target = await envelope({ target: 'step_log', ...expected });
    const uri = await envelope({ uri: 'dagu://runs/n/r/sub/c/steps/s/foreach/0/steps/b/logs' });
    for (const echoed of [target, uri]) {
      for (const [field, value] of Object.entries(expected)) assert.equal(echoed[field], value, field);
    }
    const root = await envelope({ target: 'step_log', name: 'n', dagRunId: 'r', stepName: 's' });
    assert.equal('subRunId' in root, false);
    assert.equal('item' in root, false);
  });
});
