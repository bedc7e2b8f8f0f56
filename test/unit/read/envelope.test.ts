/** The success envelope: the contract's top level, the result references, and echo fields per target. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildEnvelope, RESULT_REFERENCES, successText } from '../../../src/read/envelope.ts';

test('target, data and the three references; the uri only when the read has one', () => {
  const data = { dags: [] };
  const envelope = buildEnvelope({ mode: 'target', target: 'dags', fields: {} }, data);
  assert.deepEqual(envelope, { target: 'dags', data, references: [...RESULT_REFERENCES] });
  assert.notEqual(envelope.references, RESULT_REFERENCES);
  const withUri = buildEnvelope({ mode: 'uri', target: 'dags', fields: {}, uri: 'dagu://dags' }, data);
  assert.equal(withUri.uri, 'dagu://dags');
});

test('a target that echoes copies its echo fields present in the request, not others', () => {
  const envelope = buildEnvelope(
    {
      mode: 'target',
      target: 'step_log',
      fields: { name: 'etl', dagRunId: 'r1', stepName: 'load', limit: 5 },
    },
    {},
  );
  assert.equal(envelope.name, 'etl');
  assert.equal(envelope.dagRunId, 'r1');
  assert.equal(envelope.stepName, 'load');
  assert.equal('subRunId' in envelope, false);
  assert.equal('limit' in envelope, false);
});

test('with `supplied` given, defaults the caller did not send are not echoed', () => {
  const envelope = buildEnvelope(
    { mode: 'target', target: 'wiki', fields: { workspace: 'all', prefix: 'ops' }, supplied: ['prefix'] },
    {},
  );
  assert.equal(envelope.prefix, 'ops');
  assert.equal('workspace' in envelope, false);
});

test('a target without echo fields echoes nothing', () => {
  const envelope = buildEnvelope({ mode: 'target', target: 'runs', fields: { name: 'etl' } }, {});
  assert.deepEqual(Object.keys(envelope).sort(), ['data', 'references', 'target']);
});

test('the success text: fixed, and for dags followed by the indented JSON of data', () => {
  const runs = buildEnvelope({ mode: 'target', target: 'runs', fields: {} }, { runs: [1] });
  assert.equal(successText(runs), 'Dagu read completed.');
  const dags = buildEnvelope({ mode: 'target', target: 'dags', fields: {} }, { dags: ['a'] });
  assert.equal(successText(dags), 'Dagu read completed.\n\n{\n  "dags": [\n    "a"\n  ]\n}');
});
