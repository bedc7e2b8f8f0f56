/** Every setting: its schema, its flag, and what it accepts in words (what --help and errors say). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedText, ENV_SCHEMA, SETTINGS, type SettingName } from '../../src/settings.ts';

const setting = (name: SettingName) => {
  const found = SETTINGS.find((candidate) => candidate.name === name);
  assert.ok(found, name);
  return found;
};

test('one setting per schema property, each with a flag spelled from its name, and help text', () => {
  assert.deepEqual(
    SETTINGS.map((entry) => entry.name),
    Object.keys(ENV_SCHEMA.properties),
  );
  assert.equal(new Set(SETTINGS.map((entry) => entry.flag)).size, SETTINGS.length);
  for (const entry of SETTINGS) {
    assert.equal(entry.flag, `--${entry.name.toLowerCase().replaceAll('_', '-')}`);
    assert.ok(entry.help.length > 0, entry.name);
    assert.ok(entry.allowed.length > 0, entry.name);
  }
});

test('the allowed words follow the schema: enum, integer range, boolean, length, or the given text', () => {
  assert.equal(allowedText('LOG_LEVEL'), 'one of fatal, error, warn, info, debug, trace, silent');
  assert.equal(allowedText('TOOL_TEXT'), 'one of contract, json');
  assert.equal(allowedText('PORT'), 'a whole number from 0 to 65535');
  assert.equal(allowedText('AUTH_ALLOW_ANONYMOUS'), 'true or false');
  assert.equal(allowedText('AUTH_JWT_SECRET'), 'at least 32 characters');
  assert.equal(allowedText('DAGU_API_TOKEN'), 'a non-empty value');
  assert.match(allowedText('PUBLIC_URL'), /^an http:\/\/ or https:\/\/ origin/);
});

test('defaults are given as text, and absent where the schema has none', () => {
  assert.equal(setting('PORT').default, '8090');
  assert.equal(setting('AUTH_ALLOW_ANONYMOUS').default, 'false');
  assert.equal(setting('MCP_PATH').default, '/mcp');
  assert.equal(setting('DAGU_API_TOKEN').default, undefined);
});
