/**
 * A real Jaeger (v1.75.0, built by scripts/deploy-tools.sh and cached in ~/.cache/dagu-mcp-gateway) on
 * 127.0.0.1 with in-memory storage: spans arrive on its OTLP/HTTP receiver, tests read them back through
 * its query API (`/api/traces/{id}`), polling until they appear (bounded), never after a fixed sleep.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './dagu.ts';
import { tempDir } from './temp.ts';

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; traceID: string; spanID: string }>;
  tags: Array<{ key: string; type: string; value: unknown }>;
  /** Microseconds. */
  duration: number;
  processID: string;
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: Array<{ key: string; value: unknown }> }>;
}

export interface RunningJaeger {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for the gateway. */
  otlpUrl: string;
  queryUrl: string;
  /**
   * The trace once it holds at least `minSpans` spans, or once `until` says it is complete (polls the
   * query API, up to `timeoutMs`): spans of one trace arrive in the order they end, children first.
   */
  waitForTrace(
    traceId: string,
    until: number | ((found: JaegerTrace) => boolean),
    timeoutMs?: number,
  ): Promise<JaegerTrace>;
  stop(): Promise<void>;
}

/** The cached Jaeger binary, or why there is none (the caller skips through skipUnlessCI, or fails in CI). */
export function jaegerBinary(): { path: string } | { missing: string } {
  const built = spawnSync('bash', [join(import.meta.dirname, '../../scripts/deploy-tools.sh'), 'jaeger'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const path = built.stdout.trim().split('\n').at(-1);
  if (built.status !== 0 || path === undefined || path === '') {
    return {
      missing: `Jaeger could not be built (scripts/deploy-tools.sh jaeger): ${built.stderr.trim().split('\n').at(-1)}`,
    };
  }
  return { path };
}

/** Jaeger v2's configuration: OTLP/HTTP in, memory storage, the query API; every port on 127.0.0.1. */
function config(ports: { otlp: number; query: number; queryGrpc: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

async function poll<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 200);
  }
}

/**
 * Starts Jaeger on free 127.0.0.1 ports. With `configFile` (the compose stack's deploy/jaeger/jaeger.yaml)
 * that file is run as shipped, its endpoints moved by the variables it reads; otherwise a test config.
 */
export async function startJaeger(
  binary: string,
  options: { configFile?: string } = {},
): Promise<RunningJaeger> {
  const ports = { otlp: await freePort(), query: await freePort(), queryGrpc: await freePort() };
  let file = options.configFile;
  if (file === undefined) {
    file = join(tempDir('jaeger-'), 'jaeger.yaml');
    writeFileSync(file, config(ports));
  }
  const env = {
    ...process.env,
    JAEGER_OTLP_HTTP_ENDPOINT: `127.0.0.1:${ports.otlp}`,
    JAEGER_QUERY_HTTP_ENDPOINT: `127.0.0.1:${ports.query}`,
    JAEGER_QUERY_GRPC_ENDPOINT: `127.0.0.1:${ports.queryGrpc}`,
  };
  const child: ChildProcess = spawn(binary, ['--config', file], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk) => {
    output = (output + String(chunk)).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const queryUrl = `http://127.0.0.1:${ports.query}`;
  try {
    await poll('Jaeger to answer', 60_000, async () => {
      if (child.exitCode !== null) throw new Error(`Jaeger exited: ${output}`);
      const answer = await fetch(`${queryUrl}/api/services`);
      return answer.ok ? true : undefined;
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return {
    otlpUrl: `http://127.0.0.1:${ports.otlp}`,
    queryUrl,
    waitForTrace: (traceId, until, timeoutMs = 15_000) =>
      poll(
        `trace ${traceId} (${typeof until === 'number' ? `${until} spans` : until.toString()})`,
        timeoutMs,
        async () => {
          const answer = await fetch(`${queryUrl}/api/traces/${traceId}`);
          if (!answer.ok) return undefined;
          const body = (await answer.json()) as { data?: JaegerTrace[] };
          const found = body.data?.[0];
          if (found === undefined) return undefined;
          const complete = typeof until === 'number' ? found.spans.length >= until : until(found);
          return complete ? found : undefined;
        },
      ),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/**
 * A `waitForTrace` condition: `calls` gateway spans (`tools/call …`) have arrived, each with at least
 * `requests` Dagu-request spans under it. A call's span ends after its Dagu requests', so a count of
 * spans alone may see the requests before the call.
 */
export const callsArrived =
  (calls: number, requests = 1) =>
  (found: JaegerTrace): boolean => {
    const spans = found.spans.filter((span) => span.operationName.startsWith('tools/call'));
    return (
      spans.length >= calls &&
      spans.every((call) => found.spans.filter((span) => parentOf(span) === call.spanID).length >= requests)
    );
  };

/** A span's tag value by key. */
export const tag = (span: JaegerSpan, key: string): unknown =>
  span.tags.find((entry) => entry.key === key)?.value;

/** The parent span id of a span (its CHILD_OF reference), if any. */
export const parentOf = (span: JaegerSpan): string | undefined =>
  span.references.find((ref) => ref.refType === 'CHILD_OF')?.spanID;

/** The span tree, one line per span, children indented under their parent (what a reader checks by eye). */
export function spanTree(found: JaegerTrace): string {
  const byParent = new Map<string | undefined, JaegerSpan[]>();
  const ids = new Set(found.spans.map((span) => span.spanID));
  for (const span of found.spans) {
    const parent = parentOf(span);
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    byParent.set(key, [...(byParent.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of byParent.get(parent) ?? []) {
      const shown = span.tags
        .filter(
          (entry) =>
            !entry.key.startsWith('otel.') &&
            entry.key !== 'span.kind' &&
            entry.key !== 'internal.span.format',
        )
        .map((entry) => `${entry.key}=${String(entry.value)}`)
        .join(' ');
      const remote = depth === 0 && parentOf(span) !== undefined ? ` (parent ${parentOf(span)})` : '';
      lines.push(`${'  '.repeat(depth)}${span.operationName}${remote}  [${shown}]`);
      walk(span.spanID, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/** A host's span: a fresh trace id and span id, as `traceparent` carries them. */
export function hostSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The gateway's spans of tool calls in a trace. */
export const gatewaySpans = (found: JaegerTrace) =>
  found.spans.filter((span) => span.operationName.startsWith('tools/call'));

/** The spans whose parent is `parent`. */
export const childrenOf = (found: JaegerTrace, parent: JaegerSpan) =>
  found.spans.filter((span) => parentOf(span) === parent.spanID);
