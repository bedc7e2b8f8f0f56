/**
 * The standard OpenTelemetry variables (`OTEL_*`) the gateway's tracing reads: checked here, beside
 * the gateway's own settings, and turned into `GatewayConfig.tracing` by `config.ts`.
 */

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** The OTLP protocols the gateway sends: over HTTP, with JSON or protobuf bodies. */
export const OTLP_PROTOCOLS = ['http/json', 'http/protobuf'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What the `OTEL_*` variables say, checked: spans go by OTLP/HTTP to `endpoint`. */
export interface TracingConfig {
  /** `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`: the body's encoding (default `http/json`). */
  protocol: OtlpProtocol;
  /** The traces URL (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`). */
  endpoint: string;
  /** `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`: sent to the collector only, never recorded. */
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`. */
  resourceAttributes: Record<string, string>;
  sampler: TraceSampler;
  /** `OTEL_TRACES_SAMPLER_ARG` for the ratio samplers (default 1). */
  samplerRatio: number;
  /** `OTEL_BSP_*`: the batch span processor. */
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

/** `k1=v1,k2=v2` with percent-encoded values (W3C Baggage style), as OTEL_RESOURCE_ATTRIBUTES and the headers use. */
function keyValues(raw: string | undefined, name: string, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = at < 0 ? '' : pair.slice(0, at).trim();
    if (key === '') {
      problems.push(`${name}: must be key=value pairs separated by commas`);
      return {};
    }
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      problems.push(`${name}: a value is not valid percent-encoding`);
      return {};
    }
  }
  return out;
}

/**
 * Tracing from the standard OpenTelemetry variables. Off unless an OTLP endpoint is set (or
 * `OTEL_TRACES_EXPORTER=otlp`, which sends to the default local collector); `OTEL_SDK_DISABLED=true` and
 * `OTEL_TRACES_EXPORTER=none` turn it off. OTLP is spoken over HTTP only, with JSON (the default) or
 * protobuf bodies; gRPC is refused.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv, problems: string[]): TracingConfig | undefined {
  const get = (key: string) => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const exporter = get('OTEL_TRACES_EXPORTER');
  const tracesEndpoint = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = get('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || exporter === 'none') return undefined;
  if (exporter === undefined && tracesEndpoint === undefined && baseEndpoint === undefined) return undefined;
  if (exporter !== undefined && exporter !== 'otlp') {
    problems.push(`OTEL_TRACES_EXPORTER: must be otlp or none (got ${JSON.stringify(exporter)})`);
  }
  const protocol = (get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    get('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/json') as OtlpProtocol;
  if (!OTLP_PROTOCOLS.includes(protocol)) {
    problems.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL: must be ${OTLP_PROTOCOLS.join(' or ')}, the OTLP protocols the gateway sends (got ${JSON.stringify(protocol)})`,
    );
  }
  const endpoint =
    tracesEndpoint ?? `${(baseEndpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^\s]+$/.test(endpoint)) {
    problems.push('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL');
  }
  const sampler = (get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as TraceSampler;
  if (!TRACE_SAMPLERS.includes(sampler)) {
    problems.push(
      `OTEL_TRACES_SAMPLER: must be one of ${TRACE_SAMPLERS.join(', ')} (got ${JSON.stringify(sampler)})`,
    );
  }
  const samplerArg = get('OTEL_TRACES_SAMPLER_ARG');
  const samplerRatio = samplerArg === undefined ? 1 : Number(samplerArg);
  if (!(samplerRatio >= 0 && samplerRatio <= 1)) {
    problems.push(
      `OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (got ${JSON.stringify(samplerArg)})`,
    );
  }
  const integer = (key: string, fallback: number) => {
    const raw = get(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (Number.isSafeInteger(value) && value > 0) return value;
    problems.push(`${key}: must be a positive integer (got ${JSON.stringify(raw)})`);
    return fallback;
  };
  const headerVar = get('OTEL_EXPORTER_OTLP_TRACES_HEADERS')
    ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'
    : 'OTEL_EXPORTER_OTLP_HEADERS';
  return {
    protocol,
    endpoint,
    // Header values may be credentials: never shown in a problem or a log line.
    headers: keyValues(get(headerVar), headerVar, problems),
    timeoutMs: integer('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', integer('OTEL_EXPORTER_OTLP_TIMEOUT', 10_000)),
    serviceName: get('OTEL_SERVICE_NAME') ?? 'dagu-mcp-gateway',
    resourceAttributes: keyValues(get('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES', problems),
    sampler,
    samplerRatio,
    batch: {
      scheduledDelayMillis: integer('OTEL_BSP_SCHEDULE_DELAY', 5000),
      exportTimeoutMillis: integer('OTEL_BSP_EXPORT_TIMEOUT', 30_000),
      maxQueueSize: integer('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
      maxExportBatchSize: integer('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
    },
  };
}
