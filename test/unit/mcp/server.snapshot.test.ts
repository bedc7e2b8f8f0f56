// Schema snapshot of what clients see in the capabilities, tools/list, resources/templates/list and
// prompts/list: a change to the
// advertised contract must be a deliberate change to the snapshot (UPDATE_SNAPSHOTS=1 rewrites it).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { connectLegacy, connectModern, type RunningGateway, startGateway } from '../../support/gateway.ts';

const SNAPSHOT = new URL('./__snapshots__/mcp-surface.json', import.meta.url);

let gateway: RunningGateway;
before(async () => {
  // tools/list and template listing never reach Dagu: an unroutable upstream proves it.
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', DAGU_TIMEOUT_MS: '200' });
});
after(async () => {
  await gateway?.close();
});

test('capabilities, tools, resource templates and prompts match the snapshot, for both client eras', async () => {
  const surfaces = [];
  for (const connect of [connectModern, connectLegacy]) {
    const client = await connect(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      const { resourceTemplates } = await client.listResourceTemplates();
      const { prompts } = await client.listPrompts();
      surfaces.push({ capabilities: client.serverCapabilities(), tools, resourceTemplates, prompts });
    } finally {
      await client.close();
    }
  }
  assert.deepEqual(surfaces[0], surfaces[1], 'both eras advertise the same surface');
  const actual = `${JSON.stringify(surfaces[0], null, 2)}\n`;
  if (process.env.UPDATE_SNAPSHOTS === '1') writeFileSync(SNAPSHOT, actual);
  // A missing snapshot fails rather than being written: it would make the comparison vacuous.
  assert.ok(existsSync(SNAPSHOT), 'no snapshot: run with UPDATE_SNAPSHOTS=1 and review it');
  assert.equal(actual, readFileSync(SNAPSHOT, 'utf8'));
});
