/** The gateway's version is the package's. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GATEWAY_VERSION } from '../../src/version.ts';

test('GATEWAY_VERSION is package.json’s version, a semantic version', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  assert.equal(GATEWAY_VERSION, pkg.version);
  assert.match(GATEWAY_VERSION, /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/);
});
