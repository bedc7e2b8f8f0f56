import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { ToolTextMode } from '../config.ts';
import type { CompletionService } from '../read/completion.ts';
import type { ReadService } from '../read/service.ts';
import { registerCompletions } from './completion.ts';
import type { ServerInfo } from './lean.ts';
import { registerLogging } from './logging.ts';
import type { OperationObserver } from './operations.ts';
import { registerPrompts } from './prompts.ts';
import { registerResources } from './resources.ts';
import { registerReadTool } from './tool.ts';

export const SERVER_NAME = 'dagu-mcp-gateway';

/** The server identity both paths announce (`serverInfo`, and `_meta` on 2026-07-28 results). */
export const serverInfo = (version: string): ServerInfo => ({
  name: SERVER_NAME,
  title: 'Dagu MCP Gateway',
  version,
});

export interface McpEndpointOptions {
  version: string;
  reads: ReadService;
  completions: CompletionService;
  observe: OperationObserver;
  /** What the tool result's text says (`TOOL_TEXT`); the contract's text when absent. */
  toolText?: ToolTextMode;
  maxRequestBodySize: number;
  onError?: (error: Error) => void;
}

/** The body as the route parsed it; `authInfo` carries the message's facts (request-side-channel.ts). */
type FetchOptions = { parsedBody?: unknown; authInfo?: AuthInfo };

/** A web-standard MCP handler: what the HTTP route adapts to Node. */
export interface McpEndpoint {
  fetch(request: Request, options?: FetchOptions): Promise<Response>;
  close(): Promise<void>;
}

const INSTRUCTIONS =
  'Read-only access to a Dagu workflow server. Call dagu_read; read dagu://reference/read-tool for every target, field and query parameter.';

export type McpServerOptions = Pick<
  McpEndpointOptions,
  'version' | 'reads' | 'completions' | 'observe' | 'toolText'
>;

/** One MCP server with everything it serves: per HTTP request, or once per stdio connection. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(serverInfo(options.version), { instructions: INSTRUCTIONS });
  registerReadTool(server, options.reads, options.observe, options.toolText);
  registerResources(server, options.reads, options.observe);
  registerPrompts(server);
  registerLogging(server);
  registerCompletions(server, options.completions, options.observe);
  return server;
}

/**
 * The MCP endpoint. Stateless: every HTTP request gets a fresh McpServer (nothing is shared between
 * callers). 2026-07-28 requests go to the SDK's modern handler; initialize-era requests get a
 * per-request stateless transport. Both answer plain JSON: the SDK's own legacy fallback always
 * answers with an SSE frame, which a read tool with no progress notifications has no use for.
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const buildServer = () => createMcpServer(options);
  const modern = createMcpHandler(buildServer, {
    legacy: 'reject',
    responseMode: 'json',
    maxRequestBodySize: options.maxRequestBodySize,
    ...(options.onError ? { onerror: options.onError } : {}),
  });

  async function serveLegacy(request: Request, fetchOptions: FetchOptions): Promise<Response> {
    const server = buildServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    if (options.onError) transport.onerror = options.onError;
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, fetchOptions);
    } finally {
      await server.close();
    }
  }

  return {
    async fetch(request, fetchOptions = {}) {
      const legacy = await isLegacyRequest(request, fetchOptions.parsedBody, {
        maxRequestBodySize: options.maxRequestBodySize,
      });
      return legacy ? serveLegacy(request, fetchOptions) : modern.fetch(request, fetchOptions);
    },
    close: () => modern.close(),
  };
}
