import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIGURATION_PAGE, configurationMarkdown } from '../../../scripts/config-doc.ts';
import { SETTINGS } from '../../../src/settings.ts';

test('docs/configuration.md is exactly what the settings table generates (regenerate: node --import tsx scripts/config-doc.ts)', () => {
  assert.equal(readFileSync(CONFIGURATION_PAGE, 'utf8'), configurationMarkdown());
});

test('the generated page has one row per setting, naming its variable, flag and default', () => {
  const rows = configurationMarkdown()
    .split('\n')
    .filter((line) => line.startsWith('| `'));
  assert.equal(rows.length, SETTINGS.length);
  for (const [index, setting] of SETTINGS.entries()) {
    assert.ok(rows[index]!.startsWith(`| \`${setting.name}\` | \`${setting.flag}\` | `), rows[index]);
    if (setting.default !== undefined)
      assert.ok(rows[index]!.includes(`\`${setting.default}\``), setting.name);
  }
});
