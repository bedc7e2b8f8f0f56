import type { AuditEntry, AuditLog } from './audit/audit-log.ts';
import { redactArguments } from './audit/redact.ts';
import type { Log } from './core/log.ts';
import type { OperationObserver, OperationRecord } from './mcp/operations.ts';
import type { GatewayMetrics } from './metrics/metrics.ts';

export interface ObserverSinks {
  metrics: GatewayMetrics;
  audit: AuditLog;
  /** The application log: unexpected failures are logged with their cause (never sent to the caller). */
  log: Log;
}

const AUDIT_EVENTS = {
  'tools/call': 'mcp.tool_call',
  'resources/read': 'mcp.resource_read',
  'completion/complete': 'mcp.completion',
} as const satisfies Record<OperationRecord['method'], AuditEntry['event']>;

/** What happens after every MCP read: one metrics observation, one audit record, and a log line on internal errors. */
export function createOperationObserver({ metrics, audit, log }: ObserverSinks): OperationObserver {
  return (record: OperationRecord) => {
    const { outcome, request } = record;
    const errorCode = outcome.ok ? undefined : outcome.error.code;
    metrics.observeOperation({
      method: record.method,
      ...(record.tool ? { tool: record.tool } : {}),
      ...(outcome.facts.target ? { target: outcome.facts.target } : {}),
      ...(errorCode ? { errorType: errorCode } : {}),
      ...(request?.protocolVersion ? { protocolVersion: request.protocolVersion } : {}),
      durationSeconds: record.durationSeconds,
    });
    if (!outcome.ok && outcome.error.code === 'internal_error') {
      log.error({ err: outcome.cause, requestId: request?.requestId }, 'read failed unexpectedly');
    }
    if (request === undefined) {
      // Only a wiring bug gets here: the read was refused (fail closed), and someone must look.
      log.error({ method: record.method }, 'MCP call without per-call context refused as unauthorized');
    }
    const fromArguments =
      record.method === 'tools/call'
        ? redactArguments(request?.rawArguments?.value)
        : record.method === 'resources/read'
          ? { uri: outcome.facts.uri }
          : {};
    audit.record({
      ...fromArguments,
      event: AUDIT_EVENTS[record.method],
      requestId: request?.requestId ?? 'unknown',
      ...(request
        ? { identity: request.identity, identityKind: request.identityKind, role: request.role }
        : {}),
      ...(request?.clientName ? { clientName: request.clientName } : {}),
      ...(request?.clientVersion ? { clientVersion: request.clientVersion } : {}),
      ...(request?.protocolVersion ? { protocolVersion: request.protocolVersion } : {}),
      method: record.method,
      ...(record.tool ? { tool: record.tool } : {}),
      ...(outcome.facts.target ? { target: outcome.facts.target } : {}),
      ...(outcome.facts.uri ? { uri: outcome.facts.uri } : {}),
      ...(outcome.facts.workbookPath ? { workbookPath: outcome.facts.workbookPath } : {}),
      outcome: outcome.ok ? 'ok' : outcome.error.code,
      durationMs: Math.round(record.durationSeconds * 1000),
      ...(outcome.facts.upstreamStatus !== undefined ? { upstreamStatus: outcome.facts.upstreamStatus } : {}),
    });
  };
}
