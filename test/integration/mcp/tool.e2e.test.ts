// TOOL_TEXT: `contract` (the default) keeps the contract's exact success text; `json` adds the JSON of
// `data` after it, for hosts that show only `content`. Through both MCP clients, on the real Dagu.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { CONNECTORS, type RunningGateway, startGateway, type TestClient } from '../../support/gateway.ts';

const SUCCESS_TEXT = 'Dagu read completed.';

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

const reads = () => [
  { target: 'run', name: dagu.seed.dags.fails, dagRunId: dagu.seed.runs.fails },
  { target: 'run_logs', name: dagu.seed.dags.fails, dagRunId: 'latest' },
  { target: 'reference', name: 'tools' },
  { target: 'runs' },
];

for (const mode of [undefined, 'contract', 'json'] as const) {
  for (const [era, connect] of Object.entries(CONNECTORS)) {
    describe(`TOOL_TEXT=${mode ?? '(unset)'} through the ${era} client`, () => {
      let gateway: RunningGateway;
      let client: TestClient;
      before(async () => {
        gateway = await startGateway({
          DAGU_URL: dagu.url,
          DAGU_API_BASE: dagu.apiBase,
          ...(mode ? { TOOL_TEXT: mode } : {}),
        });
        client = await connect(gateway.mcpUrl);
      });
      after(async () => {
        await client?.close();
        await gateway?.close();
      });

      test('success text of each target', async () => {
        for (const args of reads()) {
          const result = await client.callTool(args);
          assert.equal(result.isError, undefined, JSON.stringify(result));
          const data = result.structuredContent?.data;
          const text = String(result.content[0]?.text);
          if (mode === 'json') {
            assert.equal(text, `${SUCCESS_TEXT}\n\n${JSON.stringify(data, null, 2)}`, args.target);
            assert.deepEqual(JSON.parse(text.slice(SUCCESS_TEXT.length)), data);
          } else {
            assert.equal(text, SUCCESS_TEXT, args.target);
          }
          // The content items stay what the contract says: the text, then a link when there is a uri.
          assert.equal(result.content.length, result.structuredContent?.uri === undefined ? 1 : 2);
        }
      });

      test('dags and errors read the same in both modes', async () => {
        const dags = await client.callTool({ target: 'dags' });
        const text = String(dags.content[0]?.text);
        assert.equal(text, `${SUCCESS_TEXT}\n\n${JSON.stringify(dags.structuredContent?.data, null, 2)}`);
        const failed = await client.callTool({ target: 'run', name: dagu.seed.dags.fails });
        assert.equal(failed.isError, true);
        assert.equal(
          failed.content[0]?.text,
          `invalid_tool_input: ${String(failed.structuredContent?.message)}`,
        );
      });
    });
  }
}
