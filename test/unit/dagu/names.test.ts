import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canName, isDagName, isDagRunId, isStepName } from '../../../src/dagu/names.ts';

test('DAG names: letters, digits, _ . - only, at most 40 characters, not . or ..', () => {
  for (const name of ['two-steps', 'dotted.name', 'A_1', 'x'.repeat(40), '.hidden', 'a..b']) {
    assert.equal(isDagName(name), true, name);
  }
  for (const name of [
    '',
    '.',
    '..',
    'x'.repeat(41),
    'two steps',
    'a?b',
    'a#b',
    'twö',
    '日本',
    '$HOME',
    '$'.concat('{X}'),
    'a/b',
    'a:b',
    'a+b',
  ]) {
    assert.equal(isDagName(name), false, name);
  }
});

test('DAG-run ids: letters, digits, _ - only, at most 64 characters', () => {
  for (const id of [
    '0357UTiN3K8ICSlMe2ZyY7',
    'latest',
    'a-b_c',
    'x'.repeat(64),
    'FNStBRJAZAGrmAcH14agzHG5ydXQG13xba1Pto4NyLVy',
  ]) {
    assert.equal(isDagRunId(id), true, id);
  }
  for (const id of ['', 'x'.repeat(65), 'a.b', 'a b', 'ü', '$X', '%41']) {
    assert.equal(isDagRunId(id), false, id);
  }
});

test('step names: any characters, 1 to 255 bytes of UTF-8', () => {
  for (const step of ['step one', 'deploy region', 'ß', 'x'.repeat(255), 'é'.repeat(127)]) {
    assert.equal(isStepName(step), true, step);
  }
  for (const step of ['', 'x'.repeat(256), 'é'.repeat(128)]) assert.equal(isStepName(step), false, step);
});

test('each route parameter has its rule; others have none', () => {
  assert.equal(canName('fileName', 'two steps'), false);
  assert.equal(canName('name', 'two steps'), false);
  assert.equal(canName('subRunId', 'a.b'), false);
  assert.equal(canName('subDAGRunId', 'a.b'), false);
  assert.equal(canName('bodyStepName', ''), false);
  assert.equal(canName('stepName', 'step one'), true);
  assert.equal(canName('item', '0.1'), true);
});
