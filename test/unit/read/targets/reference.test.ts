/** The gateway's own reference topics: the list, one topic, and a topic that does not exist. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNRESTRICTED_ACCESS } from '../../../../src/core/access.ts';
import type { TargetDeps } from '../../../../src/read/definition.ts';
import { ReadError } from '../../../../src/read/errors.ts';
import { DEFAULT_REFERENCE_TOPIC, referenceTargets } from '../../../../src/read/targets/reference.ts';
import type { CallContext } from '../../../../src/read/types.ts';
import { REFERENCE_TOPICS } from '../../../../src/reference/topics.ts';

// Reference reads are static: no Dagu, no workbook reader is reached.
const deps = {} as TargetDeps;
const call: CallContext = { access: UNRESTRICTED_ACCESS };

test('references lists every topic with its URI, markdown type, title and description', async () => {
  const { data } = await referenceTargets.references.handle(
    { mode: 'target', target: 'references', fields: {} },
    deps,
    call,
  );
  const items = (data as { items: Array<{ name: string; uri: string; mimeType: string; title: string }> })
    .items;
  assert.deepEqual(
    items.map((item) => item.name),
    REFERENCE_TOPICS.map((topic) => topic.name),
  );
  for (const item of items) {
    assert.equal(item.uri, `dagu://reference/${item.name}`);
    assert.equal(item.mimeType, 'text/markdown');
    assert.ok(item.title.length > 0);
  }
});

test('reference reads one topic as markdown text; the default topic is authoring', async () => {
  assert.equal(DEFAULT_REFERENCE_TOPIC, 'authoring');
  const topic = REFERENCE_TOPICS[0]!;
  const { data } = await referenceTargets.reference.handle(
    { mode: 'target', target: 'reference', fields: { name: topic.name } },
    deps,
    call,
  );
  assert.deepEqual(data, { name: topic.name, mimeType: 'text/markdown', text: topic.text });
});

test('an unknown topic is resource_not_found naming its URI and the known topics', async () => {
  await assert.rejects(
    referenceTargets.reference.handle(
      { mode: 'target', target: 'reference', fields: { name: 'nope' } },
      deps,
      call,
    ),
    (error: unknown) =>
      error instanceof ReadError &&
      error.code === 'resource_not_found' &&
      error.uri === 'dagu://reference/nope' &&
      error.message === 'Reference topic "nope" does not exist.' &&
      JSON.stringify(error.details?.topics) === JSON.stringify(REFERENCE_TOPICS.map((topic) => topic.name)),
  );
});
