import type { LoggingLevel, McpServer } from '@modelcontextprotocol/server';
import { paramsSchema } from './params.ts';

const LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

const SET_LEVEL = paramsSchema<{ level: LoggingLevel }>({
  type: 'object',
  required: ['level'],
  properties: { level: { type: 'string', enum: [...LEVELS] }, _meta: { type: 'object' } },
});

/**
 * The `logging` capability of a stateless server. `logging/setLevel` (initialize era) is accepted and
 * answered `{}`, but there is no session to keep a level in: it applies to the request that carries it,
 * and the gateway sends no `notifications/message` during any request (its answers are single JSON
 * responses, and failures are in the results themselves). On 2026-07-28 the method does not exist (the
 * SDK answers Method not found); the per-request `_meta` level is accepted and, likewise, sends nothing.
 */
export function registerLogging(server: McpServer): void {
  server.server.registerCapabilities({ logging: {} });
  server.server.setRequestHandler('logging/setLevel', SET_LEVEL, () => ({}));
}
