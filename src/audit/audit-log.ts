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

/**
 * The JSON line for an entry: snake_case keys in a fixed order, strings trimmed and cut, URI query values dropped.
 * One object literal of every column in order, serialized by one JSON.stringify, which leaves out the
 * undefined ones: the literal has one shape for every entry (V8's fast serializer path, no keyed stores
 * growing a dictionary of properties), and V8 writes the line into one flat string.
 */
export function formatAuditLine(entry: AuditEntry, now: () => Date = () => new Date()): string {
  let { uri, queryKeys } = entry;
  if (uri !== undefined) {
    const split = splitAuditUri(uri);
    uri = split.uri;
    if (split.queryKeys && queryKeys === undefined) queryKeys = split.queryKeys;
  }
  const record: Record<AuditColumn, unknown> = {
    time: entry.time ?? now().toISOString(),
    event: auditText(entry.event),
    request_id: auditText(entry.requestId),
    identity: auditText(entry.identity),
    identity_kind: auditText(entry.identityKind),
    role: auditText(entry.role),
    client_name: auditText(entry.clientName, 128),
    client_version: auditText(entry.clientVersion, 64),
    client_id: auditText(entry.clientId, 512),
    user_agent: auditText(entry.userAgent, 128),
    protocol_version: auditText(entry.protocolVersion),
    http_method: auditText(entry.httpMethod),
    path: auditText(entry.path),
    method: auditText(entry.method),
    tool: auditText(entry.tool),
    target: auditText(entry.target),
    uri: uri,
    name: auditText(entry.name),
    dag_run_id: auditText(entry.dagRunId),
    sub_run_id: auditText(entry.subRunId),
    step_name: auditText(entry.stepName),
    item: auditText(entry.item),
    body_step_name: auditText(entry.bodyStepName),
    workspace: auditText(entry.workspace),
    prefix: auditText(entry.prefix),
    workbook_path: auditText(entry.workbookPath),
    limit: entry.limit,
    has_search: entry.hasSearch,
    has_cursor: entry.hasCursor,
    has_password: entry.hasPassword,
    query_keys: queryKeys,
    outcome: auditText(entry.outcome),
    reason: auditText(entry.reason),
    http_status: entry.httpStatus,
    duration_ms:
      typeof entry.durationMs === 'number' ? Math.round(entry.durationMs * 1000) / 1000 : entry.durationMs,
    upstream_status: entry.upstreamStatus,
    trace_id: auditText(entry.traceId),
  };
  return `${JSON.stringify(record)}\n`;
}

/** Every field of an entry has its column (the compiler checks the literal above names each one). */
type AuditColumn = CamelToSnake<keyof AuditEntry>;
type CamelToSnake<Key extends string> = Key extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${CamelToSnake<Tail>}`
  : Key;

export interface AuditLog {
  /**
   * Writes one line. Never throws: a failure is counted, logged and reported by healthy()/lastError.
   * `now` (the default) writes it before returning; `turn` queues it with the other lines queued in
   * this event-loop turn, all written by one write at the turn's end: the caller answers only after
   * `written()`, so no answer leaves before its line is with the OS.
   */
  record(entry: AuditEntry, when?: 'now' | 'turn'): void;
  /** Settles once the lines queued (`turn`) are written or their write failed; undefined when none are queued. */
  written(): Promise<void> | undefined;
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
  metrics?: { auditWriteFailure(records?: number): void };
  log?: Log;
  /** Reopen the file on SIGHUP. Default true. */
  signals?: boolean;
  now?: () => Date;
}

const errorText = (error: unknown) =>
  (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error);

/**
 * The audit file, opened for append (created 0640) and written synchronously, one write per record
 * or per turn's queued records: when a write returns, the lines are with the OS and a failure is
 * already known. Throws at start-up when the file cannot be opened.
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
 * The lines of one event-loop turn (`record(entry, 'turn')`), written together when it ends: with 16
 * calls at once, a write per record cost the gateway 5-8 % of its CPU per call (bench/RESULTS.md,
 * twelfth round). `written()` settles after that write; `flush()` writes the queue at once.
 */
function turnQueue(write: (lines: string, count: number) => void) {
  let queued = '';
  let count = 0;
  /** While lines are queued: the promise `written()` returns, and what settles it. */
  let pending: { written: Promise<void>; settle: () => void } | undefined;

  function flush(): void {
    if (pending === undefined) return;
    const { settle } = pending;
    const lines = queued;
    const lineCount = count;
    queued = '';
    count = 0;
    pending = undefined;
    write(lines, lineCount);
    settle();
  }

  return {
    add(line: string): void {
      queued += line;
      count += 1;
      if (pending !== undefined) return;
      let settle!: () => void;
      const written = new Promise<void>((resolve) => {
        settle = resolve;
      });
      pending = { written, settle };
      setImmediate(flush);
    },
    flush,
    written: (): Promise<void> | undefined => pending?.written,
  };
}

/** The /readyz check of an audit log: failing while its last write or reopen failed. */
function readinessOf(lastError: () => string | undefined): AuditLog['readiness'] {
  return {
    name: 'audit_log',
    check: async () => {
      const error = lastError();
      return error === undefined ? { ok: true } : { ok: false, detail: error };
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

  function writeFailed(error: unknown, action: string, records = 1): void {
    failures += records;
    writeError = `${action} failed: ${errorText(error)}`;
    options.metrics?.auditWriteFailure(records);
    log.error({ target, error: writeError, failures, records }, 'audit record not written');
  }

  /** Writes `lines` (`count` records) at once; a failure counts each of them. */
  function write(lines: string, count: number): void {
    if (stream !== undefined) {
      stream.write(lines, (error) => {
        if (error) writeFailed(error, 'write', count);
        else writeError = undefined;
      });
      return;
    }
    try {
      file?.write(lines, writeError !== undefined);
      writeError = undefined;
    } catch (error) {
      writeFailed(error, 'write', count);
    }
  }

  const queue = turnQueue(write);

  // A failed stdout write reaches its callback (counted there) and is also emitted: keep it from crashing us.
  const onStreamError = () => {};
  stream?.on('error', onStreamError);
  // Queued lines belong to the file they were queued for (the one logrotate moves away).
  const reopen = () => {
    queue.flush();
    file?.reopen();
  };
  if (file !== undefined && (options.signals ?? true)) process.on('SIGHUP', reopen);

  const lastError = () => writeError ?? file?.reopenError;

  return {
    record(entry, when = 'now') {
      let line: string;
      try {
        line = formatAuditLine(entry, now);
      } catch (error) {
        writeFailed(error, 'format');
        return;
      }
      if (when === 'turn') return queue.add(line);
      // The lines queued before this one go first: the file keeps the order of the records.
      queue.flush();
      write(line, 1);
    },
    written: queue.written,
    reopen,
    healthy: () => lastError() === undefined,
    get lastError() {
      return lastError();
    },
    get failures() {
      return failures;
    },
    readiness: readinessOf(lastError),
    close() {
      queue.flush();
      process.off('SIGHUP', reopen);
      stream?.off('error', onStreamError);
      file?.close();
    },
  };
}
