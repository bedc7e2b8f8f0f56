import { randomUUID } from 'node:crypto';
import {
  type JSONRPCMessage,
  type McpServer,
  PROTOCOL_VERSION_META_KEY,
  type Transport,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { UNRESTRICTED_ACCESS } from '../core/access.ts';
import { cutToCodePoints } from '../core/code-points.ts';
import { type ClientInfo, clientInfoOf, liftArguments, traceContextOf } from '../mcp/request-message.ts';
import { carryingFacts, type McpRequestFacts } from '../mcp/request-side-channel.ts';

/** Who a stdio caller is: the local user who started the process (and its Dagu credential). */
export const STDIO_IDENTITY = 'stdio';

export interface StdioOptions {
  /** A fresh MCP server with the read tool and resources (the HTTP endpoint's own factory). */
  createServer: () => McpServer;
  callDeadlineMs: number;
  onError?: (error: Error) => void;
  /** A transport over other streams (tests); default stdin/stdout. */
  transport?: Transport;
  /** Tracing is on: each message's facts carry its JSON-RPC id and the host's `_meta.traceparent`. */
  traceContext?: boolean;
}

type JsonObject = Record<string, unknown>;
const asObject = (value: unknown): JsonObject | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
const text = (value: unknown, max: number) =>
  typeof value === 'string' ? cutToCodePoints(value, max) : undefined;

/**
 * Serves MCP on stdin/stdout for a local host: the same server, read service and audit as HTTP, both
 * protocol eras (the SDK's stdio entry pins one per connection). There is no bearer here: the caller
 * is the local user, audited as `stdio` with the `local` kind, and reads everything the gateway's own
 * Dagu credential can. Per-call facts (raw tool arguments, deadline, client name) are set for each
 * incoming message, as the HTTP route sets them per request.
 */
export function serveMcpOverStdio(options: StdioOptions): { close(): Promise<void> } {
  // A legacy client names itself once, in `initialize`; its later messages are audited with that name.
  let client: ClientInfo = { name: undefined, version: undefined };
  let protocolVersion: string | undefined;

  const factsFor = (message: JSONRPCMessage): { message: JSONRPCMessage; facts: McpRequestFacts } => {
    const body = asObject(message);
    const params = asObject(body?.params);
    const info = clientInfoOf(message);
    if (body?.method === 'initialize') {
      client = info;
      protocolVersion = text(params?.protocolVersion, 32);
    }
    const meta = asObject(params?._meta);
    const lifted = liftArguments(message);
    const id = body?.id;
    const facts: McpRequestFacts = {
      requestId: typeof id === 'string' || typeof id === 'number' ? `stdio-${id}` : randomUUID(),
      access: UNRESTRICTED_ACCESS,
      identity: STDIO_IDENTITY,
      identityKind: 'local',
      role: 'local',
      protocolVersion: text(meta?.[PROTOCOL_VERSION_META_KEY], 32) ?? protocolVersion,
      clientName: info.name ?? client.name,
      clientVersion: info.version ?? client.version,
      signal: AbortSignal.timeout(options.callDeadlineMs),
      ...(lifted.raw ? { rawArguments: lifted.raw } : {}),
    };
    if (options.traceContext === true) Object.assign(facts, traceContextOf(message));
    return { message: lifted.body as JSONRPCMessage, facts };
  };

  // Each server the SDK pins for the connection gets its messages inside their own per-call facts.
  const createServer = () => {
    const server = options.createServer();
    const connect = server.connect.bind(server);
    server.connect = async (channel: Transport) => {
      await connect(channel);
      const deliver = channel.onmessage;
      if (deliver === undefined) return;
      channel.onmessage = (message, extra) => {
        const { message: lifted, facts } = factsFor(message);
        deliver(lifted, { ...extra, authInfo: carryingFacts(facts) });
      };
    };
    return server;
  };

  return serveStdio(createServer, {
    ...(options.transport ? { transport: options.transport } : {}),
    ...(options.onError ? { onerror: options.onError } : {}),
  });
}
