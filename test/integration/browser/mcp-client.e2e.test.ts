// A web page using the MCP TypeScript SDK's client, in a real headless Chromium, against the real
// gateway and Dagu: from an origin ALLOWED_ORIGINS admits it sees the 401 challenge (CORS exposes
// `WWW-Authenticate`), connects with a key, lists tools, reads a run, a step log and a `dagu://`
// resource and completes an argument; from another origin the browser blocks the fetch and the gateway
// audits the refusal. The same page is served to both origins: `localhost` and `127.0.0.1`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  type CapturedGateway,
  newApiKey,
  startCapturedGateway,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import {
  bundleMcpPage,
  chromiumMissing,
  launchChromium,
  MCP_PAGE_HTML,
  type StaticServer,
  startStaticServer,
} from '../../support/browser.ts';
import type { McpPage, SeenResponse, StepResult } from '../../support/browser-page/mcp-page.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';

const skip = skipUnlessCI(chromiumMissing());
const KEY = newApiKey('browser');

let dagu: TestDagu;
let pages: StaticServer;
let gateway: CapturedGateway;
let browser: Browser;
let allowedOrigin: string;
let otherOrigin: string;

before(async () => {
  if (skip !== false) return;
  dagu = await getTestDagu();
  pages = await startStaticServer({
    files: { '/index.html': MCP_PAGE_HTML, '/mcp-page.js': await bundleMcpPage() },
  });
  allowedOrigin = `http://localhost:${pages.port}`;
  otherOrigin = pages.url;
  gateway = await startCapturedGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'browser-key', key: KEY }]),
    ALLOWED_ORIGINS: allowedOrigin,
  });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await gateway?.close();
  await pages?.close();
  await dagu?.stop();
});

/** A fresh browser context on the test page from `origin`, once the page has loaded its script. */
async function openPage(origin: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.waitForSelector('body[data-ready="true"]');
  return { context, page };
}

/** Runs one page action (`window.mcpPage`) and waits until the page shows the step. */
async function act<T extends StepResult>(
  page: Page,
  shown: string,
  action: (mcp: McpPage, arg: unknown) => Promise<T>,
  arg?: unknown,
): Promise<T> {
  const result = await page.evaluate(
    ([source, value]) => {
      // The action arrives as text: evaluate runs it in the page with the page's client.
      const run = new Function('mcp', 'arg', `return (${source})(mcp, arg);`) as (
        mcp: McpPage,
        arg: unknown,
      ) => Promise<T>;
      return run(window.mcpPage, value);
    },
    [action.toString(), arg] as const,
  );
  await page.waitForSelector(`#log li[data-step="${shown}"]`);
  return result;
}

const text = (result: StepResult): string => {
  const value = result.value as { content?: Array<{ type: string; text?: string }> };
  return value.content?.find((item) => item.type === 'text')?.text ?? '';
};

describe('the MCP SDK client in Chromium', { skip }, () => {
  test('from an allowed origin: the 401 challenge, then a key, tools, reads, a resource, a completion', async () => {
    const { context, page } = await openPage(allowedOrigin);
    try {
      const mcpUrl = gateway.mcpUrl;
      const anonymous = await act(page, 'connect', (mcp, url) => mcp.connect(url as string), mcpUrl);
      assert.equal(anonymous.ok, false);
      assert.equal((anonymous.value as { status: unknown }).status, 401);
      const challenged = await page.evaluate(() => window.mcpPage.responses());
      const challenge = challenged.find((response: SeenResponse) => response.status === 401);
      // Readable only because the gateway exposes it to this origin.
      assert.match(challenge?.wwwAuthenticate ?? '', /^Bearer realm="dagu-mcp-gateway"/);
      assert.equal(await page.locator('#log li[data-step="connect"]').getAttribute('data-ok'), 'false');

      const keyed = await act(
        page,
        'connect-with-key',
        (mcp, arg) => {
          const [url, key] = arg as [string, string];
          return mcp.connect(url, key);
        },
        [mcpUrl, KEY],
      );
      assert.equal(keyed.ok, true, JSON.stringify(keyed.value));

      const tools = await act(page, 'tools', (mcp) => mcp.listTools());
      assert.deepEqual(
        (tools.value as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name),
        ['dagu_read'],
      );

      const name = dagu.seed.dags.twoSteps;
      const dagRunId = dagu.seed.runs.twoStepsFirst;
      const stepName = dagu.seed.facts.twoStepsStepNames[0];
      const run = await act(page, 'call-run', (mcp, args) => mcp.callTool(args as Record<string, unknown>), {
        target: 'run',
        name,
        dagRunId,
      });
      assert.equal(run.ok, true, JSON.stringify(run.value));
      const runData = (run.value as { structuredContent: { target: string; data: { dagRunId: string } } })
        .structuredContent;
      assert.equal(runData.target, 'run');
      assert.equal(runData.data.dagRunId, dagRunId);
      assert.equal(text(run), 'Dagu read completed.');

      const log = await act(
        page,
        'call-step_log',
        (mcp, args) => mcp.callTool(args as Record<string, unknown>),
        { target: 'step_log', name, dagRunId, stepName },
      );
      const logData = (log.value as { structuredContent: { data: { stdoutContent: string } } })
        .structuredContent.data;
      assert.notEqual(logData.stdoutContent, '');

      const uri = `dagu://runs/${name}/${dagRunId}`;
      const resource = await act(page, 'resource', (mcp, value) => mcp.readResource(value as string), uri);
      const contents = (resource.value as { contents: Array<{ uri: string; text: string }> }).contents;
      assert.equal(contents[0]?.uri, uri);
      assert.equal((JSON.parse(contents[0]?.text ?? '{}') as { dagRunId?: string }).dagRunId, dagRunId);

      const completion = await act(page, 'complete', (mcp, params) => mcp.complete(params as never), {
        ref: { type: 'ref/resource', uri: 'dagu://dags/{name}/spec' },
        argument: { name: 'name', value: name.slice(0, 3) },
      });
      assert.ok(
        (completion.value as { completion: { values: string[] } }).completion.values.includes(name),
        JSON.stringify(completion.value),
      );
      // What the user sees: every step shown, only the anonymous connect failed.
      const shown = await page
        .locator('#log li')
        .evaluateAll((items) =>
          items.map((item) => `${(item as HTMLElement).dataset.step}=${(item as HTMLElement).dataset.ok}`),
        );
      assert.deepEqual(shown, [
        'connect=false',
        'connect-with-key=true',
        'tools=true',
        'call-run=true',
        'call-step_log=true',
        'resource=true',
        'complete=true',
      ]);
      await act(page, 'tools', async (mcp) => {
        await mcp.close();
        return { ok: true, value: null };
      });
    } finally {
      await context.close();
    }
  });

  test('from another origin: the browser blocks the fetch, the gateway audits the refusal', async () => {
    const { context, page } = await openPage(otherOrigin);
    try {
      const blocked = page.waitForEvent('console', {
        predicate: (message) => /blocked by CORS policy/.test(message.text()),
      });
      const result = await act(
        page,
        'connect-with-key',
        (mcp, arg) => {
          const [url, key] = arg as [string, string];
          return mcp.connect(url, key);
        },
        [gateway.mcpUrl, KEY],
      );
      assert.equal(result.ok, false);
      // The SDK's fetch threw (a TypeError, no status): the page learns nothing of the answer.
      assert.equal((result.value as { status: unknown }).status, null);
      const seen = await page.evaluate(() => window.mcpPage.responses());
      assert.deepEqual(
        seen.map((response: SeenResponse) => [response.status, response.error]),
        [[0, 'TypeError: Failed to fetch']],
      );
      assert.match((await blocked).text(), new RegExp(`from origin '${otherOrigin}' has been blocked`));
      const denied = gateway
        .auditLines()
        .filter((line) => line.event === 'mcp.request_denied' && line.outcome === 'invalid_origin');
      assert.ok(denied.length >= 1, gateway.auditText());
      assert.deepEqual(
        [denied[0]?.http_method, denied[0]?.path, denied[0]?.http_status],
        ['OPTIONS', '/mcp', 403],
      );
    } finally {
      await context.close();
    }
  });
});
