import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { ReadService } from '../read/service.ts';
import type { OperationObserver } from './operations.ts';
import { registerResources } from './resources.ts';
import { registerReadTool } from './tool.ts';

export const SERVER_NAME = 'dagu-mcp-gateway';

export interface McpEndpointOptions {
  version: string;
  reads: ReadService;
  observe: OperationObserver;
  onError?: (error: Error) => void;
}

const INSTRUCTIONS =
  'Read-only access to a Dagu workflow server. Call dagu_read; read dagu://reference/read-tool for every target, field and query parameter.';

/**
 * The web-standard MCP handler. Stateless: every HTTP request gets a fresh McpServer (nothing shared
 * between callers), serving the 2026-07-28 revision and, through the SDK's stateless legacy fallback,
 * initialize-era clients from the same endpoint.
 */
export function createMcpEndpoint(options: McpEndpointOptions) {
  const buildServer = () => {
    const server = new McpServer(
      { name: SERVER_NAME, title: 'Dagu MCP Gateway', version: options.version },
      { instructions: INSTRUCTIONS },
    );
    registerReadTool(server, options.reads, options.observe);
    registerResources(server, options.reads, options.observe);
    return server;
  };
  return createMcpHandler(buildServer, {
    responseMode: 'json',
    ...(options.onError ? { onerror: options.onError } : {}),
  });
}
