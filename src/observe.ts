import type { AuditEntry, AuditLog } from './audit/audit-log.ts';
import { redactArguments } from './audit/redact.ts';
import type { Log } from './core/log.ts';
import type { OperationObserver, OperationRecord, OperationTracer } from './mcp/operations.ts';
import type { GatewayMetrics, OperationObservation } from './metrics/metrics.ts';

export interface ObserverSinks {
  metrics: GatewayMetrics;
  audit: AuditLog;
  /** The application log: unexpected failures are logged with their cause (never sent to the caller). */
  log: Log;
  /** Tracing on: a span around every operation (src/trace/); absent, nothing is wrapped. */
  tracer?: OperationTracer | undefined;
}

const AUDIT_EVENTS = {
  'tools/call': 'mcp.tool_call',
  'resources/read': 'mcp.resource_read',
  'completion/complete': 'mcp.completion',
} as const satisfies Record<OperationRecord['method'], AuditEntry['event']>;

/** What happens after every MCP read: one metrics observation, one audit record, and a log line on internal errors. */
export function createOperationObserver({ metrics, audit, log, tracer }: ObserverSinks): OperationObserver {
  const observe = observer(metrics, audit, log);
  return tracer === undefined ? observe : Object.assign(observe, { tracer });
}

function observer(metrics: GatewayMetrics, audit: AuditLog, log: Log): (record: OperationRecord) => void {
  return (record: OperationRecord) => {
    const { outcome, request, method, tool } = record;
    const { facts } = outcome;
    const errorCode = outcome.ok ? undefined : outcome.error.code;
    // Optional fields are assigned, not spread: this runs once per call.
    const observation: OperationObservation = { method, durationSeconds: record.durationSeconds };
    if (tool) observation.tool = tool;
    if (facts.target) observation.target = facts.target;
    if (errorCode) observation.errorType = errorCode;
    if (request?.protocolVersion) observation.protocolVersion = request.protocolVersion;
    if (record.traceId) observation.traceId = record.traceId;
    metrics.observeOperation(observation);
    if (!outcome.ok && outcome.error.code === 'internal_error') {
      log.error(
        record.traceId === undefined
          ? { err: outcome.cause, requestId: request?.requestId }
          : { err: outcome.cause, requestId: request?.requestId, trace_id: record.traceId },
        'read failed unexpectedly',
      );
    }
    if (request === undefined) {
      // Only a wiring bug gets here: the read was refused (fail closed), and someone must look.
      log.error({ method }, 'MCP call without per-call context refused as unauthorized');
    }
    // A tool call's arguments, reduced to what the audit may say; a resource read's URI is in the facts.
    const entry: AuditEntry =
      method === 'tools/call'
        ? (redactArguments(request?.rawArguments?.value) as AuditEntry)
        : ({} as AuditEntry);
    entry.event = AUDIT_EVENTS[method];
    entry.requestId = request?.requestId ?? 'unknown';
    if (request) {
      entry.identity = request.identity;
      entry.identityKind = request.identityKind;
      entry.role = request.role;
      if (request.clientName) entry.clientName = request.clientName;
      if (request.clientVersion) entry.clientVersion = request.clientVersion;
      if (request.userAgent) entry.userAgent = request.userAgent;
      if (request.protocolVersion) entry.protocolVersion = request.protocolVersion;
    }
    entry.method = method;
    if (tool) entry.tool = tool;
    if (facts.target) entry.target = facts.target;
    if (facts.uri) entry.uri = facts.uri;
    if (facts.workbookPath) entry.workbookPath = facts.workbookPath;
    entry.outcome = outcome.ok ? 'ok' : outcome.error.code;
    entry.durationMs = Math.round(record.durationSeconds * 1000);
    if (facts.upstreamStatus !== undefined) entry.upstreamStatus = facts.upstreamStatus;
    if (record.traceId) entry.traceId = record.traceId;
    audit.record(entry, request?.auditInTurn === true ? 'turn' : 'now');
  };
}
