// The page of the browser tests (bundled by esbuild in test/support/browser.ts, never run by Node): the
// MCP TypeScript SDK's v2 client as a web page would ship it. It exposes `window.mcpPage` for the tests
// to drive and shows every step in the page (`#log li[data-step]`), so the tests wait for what a user
// would see. Every HTTP answer the SDK's fetch receives is recorded with the headers the browser lets
// the page read (CORS `Access-Control-Expose-Headers`).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** An HTTP answer as the page's JavaScript sees it. */
export interface SeenResponse {
  method: string;
  status: number;
  /** `null` when the browser hides the header from the page (not exposed) or it is absent. */
  wwwAuthenticate: string | null;
  protocolVersion: string | null;
  /** The error `fetch` threw instead of answering (a request the browser blocked): `TypeError: …`. */
  error?: string;
}

export interface StepResult {
  ok: boolean;
  /** The result (ok) or `{name, message, status}` of the error. */
  value: unknown;
}

export interface McpPage {
  connect(url: string, key?: string): Promise<StepResult>;
  listTools(): Promise<StepResult>;
  callTool(args: Record<string, unknown>): Promise<StepResult>;
  readResource(uri: string): Promise<StepResult>;
  complete(params: {
    ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string };
    argument: { name: string; value: string };
    context?: { arguments?: Record<string, string> };
  }): Promise<StepResult>;
  /** Every HTTP answer the SDK received so far. */
  responses(): SeenResponse[];
  close(): Promise<void>;
}

declare global {
  interface Window {
    mcpPage: McpPage;
  }
}

const seen: SeenResponse[] = [];
let client: Client | undefined;

const recordingFetch: typeof fetch = async (input, init) => {
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    const e = error as Error;
    seen.push({
      method: init?.method ?? 'GET',
      status: 0,
      wwwAuthenticate: null,
      protocolVersion: null,
      error: `${e.name}: ${e.message}`,
    });
    throw error;
  }
  seen.push({
    method: init?.method ?? 'GET',
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate'),
    protocolVersion: response.headers.get('mcp-protocol-version'),
  });
  return response;
};

function show(step: string, result: StepResult): StepResult {
  const item = document.createElement('li');
  item.dataset.step = step;
  item.dataset.ok = String(result.ok);
  item.textContent = `${step}: ${result.ok ? 'ok' : 'failed'} ${JSON.stringify(result.value).slice(0, 400)}`;
  document.getElementById('log')?.append(item);
  return result;
}

function failure(error: unknown): StepResult {
  const e = error as { name?: unknown; message?: unknown; status?: unknown };
  return {
    ok: false,
    value: { name: String(e.name), message: String(e.message), status: e.status ?? null },
  };
}

async function step(name: string, run: () => Promise<unknown>): Promise<StepResult> {
  try {
    return show(name, { ok: true, value: await run() });
  } catch (error) {
    return show(name, failure(error));
  }
}

const connected = (): Client => {
  if (client === undefined) throw new Error('not connected');
  return client;
};

window.mcpPage = {
  connect: (url, key) =>
    step(key === undefined ? 'connect' : 'connect-with-key', async () => {
      await client?.close();
      client = undefined;
      const next = new Client(
        { name: 'gateway-browser-page', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await next.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          fetch: recordingFetch,
          requestInit: key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      client = next;
      return { server: next.getServerVersion() };
    }),
  listTools: () => step('tools', () => connected().listTools()),
  callTool: (args) =>
    step(`call-${String(args.target)}`, () => connected().callTool({ name: 'dagu_read', arguments: args })),
  readResource: (uri) => step('resource', () => connected().readResource({ uri })),
  complete: (params) => step('complete', () => connected().complete(params)),
  responses: () => [...seen],
  close: async () => {
    await client?.close();
    client = undefined;
  },
};
document.body.dataset.ready = 'true';
