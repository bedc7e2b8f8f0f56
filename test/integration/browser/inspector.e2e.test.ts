// MCP Inspector's web UI (pinned in scripts/test-tools: the v1 line's, whose "Direct" connection type
// connects from the browser itself) in a real headless Chromium, served from http://localhost:<port>
// as `npx @modelcontextprotocol/inspector` serves it, against the real gateway on a loopback bind with
// ALLOWED_ORIGINS unset (the loopback rule admits it). A person's steps: pick Direct, connect, list
// tools, read a run through `dagu_read`, see the result. The screenshot is kept in test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { testTools } from '../../../scripts/test-tools.mjs';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import {
  artifactPath,
  chromiumMissing,
  launchChromium,
  type StaticServer,
  startStaticServer,
} from '../../support/browser.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';

const skip = skipUnlessCI(chromiumMissing());

let dagu: TestDagu;
let inspector: StaticServer;
let gateway: CapturedGateway;
let browser: Browser;

before(async () => {
  if (skip !== false) return;
  dagu = await getTestDagu();
  gateway = await startCapturedGateway({ DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase });
  inspector = await startStaticServer({ folder: testTools().inspectorWebV1 });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await inspector?.close();
  await gateway?.close();
  await dagu?.stop();
});

describe('MCP Inspector web UI, direct connection', { skip }, () => {
  test('connects from the browser, calls dagu_read for a run and shows the result', async (t) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
    const page = await context.newPage();
    const screenshot = artifactPath('inspector-direct-dagu-read.png');
    const name = dagu.seed.dags.twoSteps;
    const dagRunId = dagu.seed.runs.twoStepsFirst;
    try {
      const query = new URLSearchParams({ transport: 'streamable-http', serverUrl: gateway.mcpUrl });
      await page.goto(`http://localhost:${inspector.port}/?${query}`);
      await page.locator('#connection-type-select').click();
      await page.getByRole('option', { name: 'Direct' }).click();
      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await page.getByText('dagu-mcp-gateway', { exact: true }).waitFor();

      await page.getByRole('tab', { name: 'Tools' }).click();
      await page.getByRole('button', { name: 'List Tools' }).click();
      await page.getByText('Read Dagu', { exact: true }).click();
      await page.locator('textarea[name="uri"]').fill(`dagu://runs/${name}/${dagRunId}`);
      await page.getByRole('button', { name: 'Run Tool' }).click();
      const result = page.getByText('Tool Result: Success');
      await result.waitFor();
      await result.evaluate((header) => header.scrollIntoView({ block: 'start' }));
      // The result is on screen: the run the gateway read, as the Inspector renders the tool's answer.
      const shown = (await page.locator('body').textContent()) ?? '';
      const after = shown.slice(shown.indexOf('Tool Result: Success'));
      t.diagnostic(after.slice(0, 600));
      assert.match(after, new RegExp(dagRunId));
      await page.screenshot({ path: screenshot, fullPage: true });
      t.diagnostic(`screenshot: ${screenshot}`);

      const calls = gateway
        .auditLines()
        .filter((line) => line.event === 'mcp.tool_call' && line.outcome === 'ok');
      assert.equal(calls.length, 1, gateway.auditText());
      assert.equal(calls[0]?.target, 'run');
    } catch (error) {
      await page.screenshot({ path: screenshot, fullPage: true }).catch(() => undefined);
      t.diagnostic(`screenshot of the failure: ${screenshot}`);
      throw error;
    } finally {
      await context.close();
    }
  });
});
