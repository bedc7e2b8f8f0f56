import { closeSync, openSync, writeSync } from 'node:fs';
import { type Log, silentLog } from '../core/log.ts';
import { type AuditArgumentFields, auditText, splitAuditUri } from './redact.ts';

/**
 * One audit record: a tool call, a resource read, or a request refused at the HTTP layer (401, 403,
 * 429). It names the caller (key name or JWT `sub`), never a credential, password, search text,
 * cursor or query value.
 */
export interface AuditEntry extends AuditArgumentFields {
  /** ISO time; record() fills it when absent. */
  time?: string;
  event:
    | 'mcp.tool_call'
    | 'mcp.resource_read'
    | 'mcp.completion'
    | 'mcp.request_denied'
    /** The built-in authorization server (src/oauth): a consent, a grant or token, a revocation, a refusal. */
    | 'oauth.consent'
    | 'oauth.grant'
    | 'oauth.token'
    | 'oauth.registration'
    | 'oauth.revocation'
    | 'oauth.refused';
  requestId: string;
  /** Key name, JWT `sub`, or `anonymous`; absent when the request was not authenticated. */
  identity?: string;
  identityKind?: 'api_key' | 'jwt' | 'anonymous' | 'local';
  /** The identity's role (viewer … admin). */
  role?: string;
  /** The client's own `clientInfo` name and version, as it declared them (never the User-Agent). */
  clientName?: string;
  clientVersion?: string;
  /** The OAuth client id a built-in authorization server event concerns (a URL for a metadata document). */
  clientId?: string;
  userAgent?: string;
  protocolVersion?: string;
  /** The MCP method (`tools/call`, `resources/read`, `completion/complete`). */
  method?: string;
  tool?: string;
  /** `ok`, or the error code (`resource_not_found`, `unauthenticated`, `rate_limited`, …). */
  outcome: string;
  /** Why a request was refused (the auth failure or rate-limit reason). */
  reason?: string;
  httpStatus?: number;
  httpMethod?: string;
  /** The request path, never its query string. */
  path?: string;
  durationMs: number;
  upstreamStatus?: number;
  /** The W3C trace id of the call's span (tracing on). */
  traceId?: string;
}

/** Record field → JSON key, in the order written. */
const COLUMNS: ReadonlyArray<readonly [keyof AuditEntry, string]> = [
  ['time', 'time'],
  ['event', 'event'],
  ['requestId', 'request_id'],
  ['identity', 'identity'],
  ['identityKind', 'identity_kind'],
  ['role', 'role'],
  ['clientName', 'client_name'],
  ['clientVersion', 'client_version'],
  ['clientId', 'client_id'],
  ['userAgent', 'user_agent'],
  ['protocolVersion', 'protocol_version'],
  ['httpMethod', 'http_method'],
  ['path', 'path'],
  ['method', 'method'],
  ['tool', 'tool'],
  ['target', 'target'],
  ['uri', 'uri'],
  ['name', 'name'],
  ['dagRunId', 'dag_run_id'],
  ['subRunId', 'sub_run_id'],
  ['stepName', 'step_name'],
  ['item', 'item'],
  ['bodyStepName', 'body_step_name'],
  ['workspace', 'workspace'],
  ['prefix', 'prefix'],
  ['workbookPath', 'workbook_path'],
  ['limit', 'limit'],
  ['hasSearch', 'has_search'],
  ['hasCursor', 'has_cursor'],
  ['hasPassword', 'has_password'],
  ['queryKeys', 'query_keys'],
  ['outcome', 'outcome'],
  ['reason', 'reason'],
  ['httpStatus', 'http_status'],
  ['durationMs', 'duration_ms'],
  ['upstreamStatus', 'upstream_status'],
  ['traceId', 'trace_id'],
];

const SHORT_TEXT: Partial<Record<keyof AuditEntry, number>> = {
  clientName: 128,
  clientVersion: 64,
  clientId: 512,
  userAgent: 128,
};

/** The JSON line for an entry: snake_case keys in a fixed order, strings trimmed and cut, URI query values dropped. */
export function formatAuditLine(entry: AuditEntry, now: () => Date = () => new Date()): string {
  let { uri, queryKeys } = entry;
  if (uri !== undefined) {
    const split = splitAuditUri(uri);
    uri = split.uri;
    if (split.queryKeys && queryKeys === undefined) queryKeys = split.queryKeys;
  }
  // One record, one JSON.stringify: V8's serializer writes it into one flat string, where writing key by
  // key made a string per key and per join (~80 objects a call).
  const record: Record<string, unknown> = { time: entry.time ?? now().toISOString() };
  for (const [field, column] of COLUMNS) {
    if (field === 'time') continue;
    let value: unknown = field === 'uri' ? uri : field === 'queryKeys' ? queryKeys : entry[field];
    if (value === undefined) continue;
    if (typeof value === 'string') {
      value = auditText(value, SHORT_TEXT[field]);
      if (value === undefined) continue;
    } else if (field === 'durationMs' && typeof value === 'number') {
      value = Math.round(value * 1000) / 1000;
    }
    record[column] = value;
  }
  return `${JSON.stringify(record)}\n`;
}

export interface AuditLog {
  /** Writes one line. Never throws: a failure is counted, logged and reported by healthy()/lastError. */
  record(entry: AuditEntry): void;
  /** Reopens the file (what SIGHUP does after logrotate moved it). No-op for stdout and stderr. */
  reopen(): void;
  /** False after a failed write (until one succeeds) or a failed reopen (until one succeeds): for /readyz. */
  healthy(): boolean;
  readonly lastError: string | undefined;
  readonly failures: number;
  /** A /readyz check: `{ ok, detail }`. */
  readonly readiness: {
    name: string;
    check(signal?: AbortSignal): Promise<{ ok: boolean; detail?: string }>;
  };
  close(): void;
}

export interface AuditLogOptions {
  metrics?: { auditWriteFailure(): void };
  log?: Log;
  /** Reopen the file on SIGHUP. Default true. */
  signals?: boolean;
  now?: () => Date;
}

const errorText = (error: unknown) =>
  (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

/**
 * The audit file, opened for append (created 0640) and written synchronously, one write per line:
 * when a write returns, the line is with the OS and a failure is already known. Throws at start-up
 * when the file cannot be opened.
 */
function auditFile(target: string, log: Log) {
  const open = () => openSync(target, 'a', 0o640);
  let fd: number | undefined;
  try {
    fd = open();
  } catch (error) {
    throw new Error(`AUDIT_LOG: cannot open ${target} for append: ${errorText(error)}`);
  }
  let reopenError: string | undefined;
  let retryAt = 0;

  function reopen(): void {
    try {
      const next = open();
      const previous = fd;
      fd = next;
      reopenError = undefined;
      if (previous !== undefined) closeSync(previous);
      log.info({ target }, 'audit log reopened');
    } catch (error) {
      // Keep writing to the old descriptor (the rotated file) rather than losing records.
      reopenError = `reopen failed: ${errorText(error)}`;
      log.error({ target, error: reopenError }, 'audit log reopen failed');
    }
  }

  return {
    reopen,
    get reopenError() {
      return reopenError;
    },
    /** Writes the whole line; throws on failure. `failing`: the last write failed. */
    write(line: string, failing: boolean): void {
      if ((failing || reopenError !== undefined) && Date.now() >= retryAt) {
        // After a failure, try a fresh descriptor at most once a second (the file may have been removed).
        retryAt = Date.now() + 1000;
        reopen();
      }
      if (fd === undefined) throw new Error('the audit file is closed');
      // The string is written as it is (no Buffer copy of it); only a short write, rare for a regular
      // file, copies it to write the rest.
      const written = writeSync(fd, line);
      if (written === Buffer.byteLength(line)) return;
      const buffer = Buffer.from(line, 'utf8');
      let offset = written;
      while (offset < buffer.length) offset += writeSync(fd, buffer, offset);
    },
    close(): void {
      if (fd !== undefined) {
        closeSync(fd);
        fd = undefined;
      }
    },
  };
}

/**
 * The audit sink: `stdout`, `stderr` (what `--stdio` uses: stdout carries the protocol), or a file
 * (auditFile). logrotate's `create` mode works with SIGHUP (or reopen()).
 * Throws at start-up when the file cannot be opened.
 */
export function createAuditLog(target: string, options: AuditLogOptions = {}): AuditLog {
  const log = options.log ?? silentLog;
  const now = options.now ?? (() => new Date());
  const stream = target === 'stderr' ? process.stderr : target === 'stdout' ? process.stdout : undefined;
  const file = stream === undefined ? auditFile(target, log) : undefined;
  let writeError: string | undefined;
  let failures = 0;

  function writeFailed(error: unknown, action: string): void {
    failures += 1;
    writeError = `${action} failed: ${errorText(error)}`;
    options.metrics?.auditWriteFailure();
    log.error({ target, error: writeError, failures }, 'audit record not written');
  }

  function write(line: string): void {
    if (stream !== undefined) {
      stream.write(line, (error) => {
        if (error) writeFailed(error, 'write');
        else writeError = undefined;
      });
      return;
    }
    try {
      file?.write(line, writeError !== undefined);
      writeError = undefined;
    } catch (error) {
      writeFailed(error, 'write');
    }
  }

  // A failed stdout write reaches its callback (counted there) and is also emitted: keep it from crashing us.
  const onStreamError = () => {};
  stream?.on('error', onStreamError);
  const onSignal = () => file?.reopen();
  if (file !== undefined && (options.signals ?? true)) process.on('SIGHUP', onSignal);

  const lastError = () => writeError ?? file?.reopenError;

  return {
    record(entry) {
      let line: string;
      try {
        line = formatAuditLine(entry, now);
      } catch (error) {
        writeFailed(error, 'format');
        return;
      }
      write(line);
    },
    reopen: () => file?.reopen(),
    healthy: () => lastError() === undefined,
    get lastError() {
      return lastError();
    },
    get failures() {
      return failures;
    },
    readiness: {
      name: 'audit_log',
      check: async () => {
        const error = lastError();
        return error === undefined ? { ok: true } : { ok: false, detail: error };
      },
    },
    close() {
      process.off('SIGHUP', onSignal);
      stream?.off('error', onStreamError);
      file?.close();
    },
  };
}
