import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type BuildOptions, buildApp, type GatewayApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

export interface RunningGateway extends GatewayApp {
  baseUrl: string;
  mcpUrl: string;
  /** The audit log file (a fresh temp file unless AUDIT_LOG was given). */
  auditPath: string;
}

/**
 * Starts the real gateway on 127.0.0.1 with the given environment (PORT: default 0, a free port);
 * audit goes to a temp file.
 */
export async function startGateway(
  env: Record<string, string>,
  options: Omit<BuildOptions, 'logger'> = {},
): Promise<RunningGateway> {
  const auditLog = join(mkdtempSync(join(tmpdir(), 'gateway-audit-')), 'audit.log');
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', AUDIT_LOG: auditLog, ...env });
  const gateway = await buildApp(config, { logger: false, ...options });
  await gateway.app.listen({ host: config.host, port: config.port });
  const { port } = gateway.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return { ...gateway, baseUrl, mcpUrl: `${baseUrl}${config.mcpPath}`, auditPath: config.auditLog };
}

/** The minimal client surface the tests use, the same for both SDK generations. */
export interface TestClient {
  era: 'modern' | 'legacy';
  callTool(args: unknown): Promise<ToolResult>;
  listTools(): Promise<{ tools: Array<Record<string, unknown>> }>;
  readResource(uri: string): Promise<{ contents: Array<{ uri: string; mimeType?: string; text?: string }> }>;
  listResources(): Promise<{ resources: Array<{ uri: string; name: string; mimeType?: string }> }>;
  listResourceTemplates(): Promise<{ resourceTemplates: Array<{ uriTemplate: string; name: string }> }>;
  listPrompts(): Promise<{ prompts: Array<Record<string, unknown>> }>;
  getPrompt(name: string, args?: Record<string, string>): Promise<PromptResult>;
  complete(params: CompleteParams): Promise<{ completion: CompletionValues }>;
  setLoggingLevel(level: string): Promise<Record<string, unknown>>;
  /** The capabilities the server announced (initialize result or server/discover). */
  serverCapabilities(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

export interface PromptResult {
  description?: string;
  messages: Array<{ role: string; content: Record<string, unknown> }>;
}

export interface CompleteParams {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

export interface CompletionValues {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

export interface ToolResult {
  isError?: boolean;
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
}

const CLIENT_INFO = { name: 'gateway-tests', version: '1.0.0' };

/** Transport options beyond headers: `fetch` replaces the global one (an HTTPS agent trusting a test CA). */
export interface TransportOptions {
  fetch?: (url: string | URL, init?: RequestInit) => Promise<Response>;
}

/** The v2 SDK client pinned to the current protocol revision (no initialize, no session). */
export async function connectModern(
  mcpUrl: string,
  headers: Record<string, string> = {},
  transport: TransportOptions = {},
): Promise<TestClient> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers }, ...transport }),
  );
  return wrap('modern', client);
}

/** The v1 SDK client: legacy initialize + session-header era. */
export async function connectLegacy(
  mcpUrl: string,
  headers: Record<string, string> = {},
  transport: TransportOptions = {},
): Promise<TestClient> {
  const client = new LegacyClient(CLIENT_INFO);
  await client.connect(new LegacyTransport(new URL(mcpUrl), { requestInit: { headers }, ...transport }));
  return wrap('legacy', client);
}

interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<unknown>;
  readResource(params: { uri: string }): Promise<unknown>;
  listResources(): Promise<unknown>;
  listResourceTemplates(): Promise<unknown>;
  listPrompts(): Promise<unknown>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<unknown>;
  complete(params: CompleteParams): Promise<unknown>;
  setLoggingLevel(level: never): Promise<unknown>;
  getServerCapabilities(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

function wrap(era: 'modern' | 'legacy', client: AnyClient): TestClient {
  return {
    era,
    // Arguments that are not objects are sent as they are: the gateway must answer with a tool error.
    callTool: async (args) =>
      (await client.callTool({
        name: 'dagu_read',
        arguments: args as Record<string, unknown>,
      })) as ToolResult,
    listTools: async () => (await client.listTools()) as { tools: Array<Record<string, unknown>> },
    readResource: async (uri) =>
      (await client.readResource({ uri })) as Awaited<ReturnType<TestClient['readResource']>>,
    listResources: async () =>
      (await client.listResources()) as Awaited<ReturnType<TestClient['listResources']>>,
    listResourceTemplates: async () =>
      (await client.listResourceTemplates()) as Awaited<ReturnType<TestClient['listResourceTemplates']>>,
    listPrompts: async () => (await client.listPrompts()) as Awaited<ReturnType<TestClient['listPrompts']>>,
    getPrompt: async (name, args) =>
      (await client.getPrompt({ name, ...(args ? { arguments: args } : {}) })) as PromptResult,
    complete: async (params) => (await client.complete(params)) as { completion: CompletionValues },
    // Invalid levels are sent as they are: the server must refuse them.
    setLoggingLevel: async (level) =>
      (await client.setLoggingLevel(level as never)) as Record<string, unknown>,
    serverCapabilities: () => client.getServerCapabilities(),
    close: () => client.close(),
  };
}

export const CONNECTORS = { modern: connectModern, legacy: connectLegacy } as const;

/** Connects a client of `era`, hands it to `use`, and closes it however `use` ends. */
export async function withClient(
  era: 'modern' | 'legacy',
  mcpUrl: string,
  headers: Record<string, string>,
  use: (client: TestClient) => Promise<void>,
): Promise<void> {
  const client = await CONNECTORS[era](mcpUrl, headers);
  try {
    await use(client);
  } finally {
    await client.close();
  }
}
