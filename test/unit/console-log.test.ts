import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeConsoleToLog } from '../../src/console-log.ts';

test('console output becomes log records: kept until the logger exists, expected notices at debug', () => {
  const saved = { ...console };
  const records: Array<[string, string]> = [];
  const record = (level: string) => (_fields: Record<string, unknown>, message: string) => {
    records.push([level, message]);
  };
  try {
    const route = routeConsoleToLog();
    console.warn("responseMode: 'json' drops mid-call notifications. and more");
    console.warn('a library warning: %d', 3);
    assert.deepEqual(records, []);
    route.attach({
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    });
    console.log('plain', { a: 1 });
    console.error('broken');
    assert.deepEqual(records, [
      ['debug', "responseMode: 'json' drops mid-call notifications. and more"],
      ['warn', 'a library warning: 3'],
      ['info', 'plain { a: 1 }'],
      ['error', 'broken'],
    ]);
  } finally {
    Object.assign(console, saved);
  }
});
