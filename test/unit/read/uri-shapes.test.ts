/** The `dagu://` shape table and its canonical builders. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildUri,
  dagsSpecUri,
  dagsUri,
  foreachItemsUri,
  foreachItemUri,
  foreachStepLogUri,
  referenceUri,
  runLogsUri,
  runsUri,
  runUri,
  SHAPE_TABLE,
  SHAPES,
  shapeById,
  stepLogUri,
  wikiPageUri,
  wikiUri,
  withQuery,
} from '../../../src/read/uri-shapes.ts';

describe('the shape table', () => {
  test('ids are unique and each template names its slots', () => {
    assert.equal(new Set(SHAPE_TABLE.map((shape) => shape.id)).size, SHAPE_TABLE.length);
    assert.equal(shapeById('reference').template, 'dagu://reference/{topic}');
    assert.equal(
      shapeById('sub_step_log').template,
      'dagu://runs/{name}/{dagRunId}/sub/{subRunId}/steps/{stepName}/logs',
    );
    assert.equal(shapeById('wiki_page').link.mimeType, 'text/markdown');
    assert.throws(() => shapeById('nope'), /unknown URI shape nope/);
  });
});

describe('buildUri', () => {
  test('escapes each value as one segment (Go url.PathEscape)', () => {
    assert.equal(buildUri(SHAPES.run, { name: 'a b/c', dagRunId: 'x:y' }), 'dagu://runs/a%20b%2Fc/x:y');
  });

  test('a page path keeps its slashes and escapes each of its segments', () => {
    assert.equal(wikiPageUri('default', 'ops/run book'), 'dagu://wiki/default/ops/run%20book');
  });

  test('refuses . and .. as a segment value', () => {
    assert.throws(() => runUri('etl', '..'), RangeError);
    assert.throws(() => wikiPageUri('w', 'a/./b'), /cannot hold "\." as its path segment/);
  });
});

describe('the builders', () => {
  test('queries are appended as given, an empty one not at all', () => {
    assert.equal(withQuery('dagu://dags', ''), 'dagu://dags');
    assert.equal(dagsUri('labels=a%20b'), 'dagu://dags?labels=a%20b');
    assert.equal(runsUri(), 'dagu://runs');
  });

  test('root and sub runs take their shapes', () => {
    const root = { name: 'etl', dagRunId: 'r1' };
    const sub = { ...root, subRunId: 's1' };
    assert.equal(runUri('etl', 'r1'), 'dagu://runs/etl/r1');
    assert.equal(runUri('etl', 'r1', 's1'), 'dagu://runs/etl/r1/sub/s1');
    assert.equal(runUri('etl', 'r1', ''), 'dagu://runs/etl/r1');
    assert.equal(runLogsUri('etl', 'r1', 'tail=5'), 'dagu://runs/etl/r1/logs?tail=5');
    assert.equal(stepLogUri(root, 'load'), 'dagu://runs/etl/r1/steps/load/logs');
    assert.equal(stepLogUri(sub, 'load', 'head=1'), 'dagu://runs/etl/r1/sub/s1/steps/load/logs?head=1');
    assert.equal(foreachItemsUri(sub, 'each'), 'dagu://runs/etl/r1/sub/s1/steps/each/foreach');
    assert.equal(foreachItemUri(root, 'each', '3'), 'dagu://runs/etl/r1/steps/each/foreach/3');
    assert.equal(
      foreachStepLogUri(root, 'each', '3', 'body', 'tail=1'),
      'dagu://runs/etl/r1/steps/each/foreach/3/steps/body/logs?tail=1',
    );
  });

  test('references, DAG specs and wiki listings', () => {
    assert.equal(referenceUri(), 'dagu://reference');
    assert.equal(referenceUri('tools'), 'dagu://reference/tools');
    assert.equal(dagsSpecUri('etl'), 'dagu://dags/etl/spec');
    assert.equal(wikiUri(), 'dagu://wiki');
    assert.equal(wikiUri('all', 'prefix=a'), 'dagu://wiki?prefix=a');
    assert.equal(wikiUri('team'), 'dagu://wiki/team');
  });
});

describe('buildUri of every shape', () => {
  test('fills each shape template with its values escaped, literal segments kept in order', () => {
    const fields = {
      name: 'a b',
      dagRunId: 'r1',
      subRunId: 's/1',
      stepName: 'step%',
      item: 'i',
      bodyStepName: 'b',
      workspace: 'ops',
      path: 'x y/z',
    };
    const escaped: Record<string, string> = {
      ...fields,
      name: 'a%20b',
      subRunId: 's%2F1',
      stepName: 'step%25',
      path: 'x%20y/z',
    };
    for (const shape of SHAPE_TABLE) {
      const expected = shape.template.replace(/\{(\w+)\}/g, (_, label: string) =>
        label === 'topic' ? escaped.name! : escaped[label]!,
      );
      assert.equal(buildUri(shape, fields), expected, shape.id);
    }
  });
});
