import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config.ts';
import type { UpstreamTrace } from '../dagu/client.ts';
import type { OperationRecord, OperationTrace, OperationTracer } from '../mcp/operations.ts';
import type { McpRequestFacts } from '../mcp/request-side-channel.ts';
import { GATEWAY_VERSION } from '../version.ts';

/**
 * Tracing, loaded only when the `OTEL_*` variables turn it on (config.ts `tracingFromEnv`). One span per
 * MCP operation (kind SERVER, MCP semantic conventions), continuing the host's W3C trace context, and
 * one child span per Dagu request (kind CLIENT), whose `traceparent` goes to Dagu. The provider is this
 * gateway's own, not the process-wide global: nothing else in the process is instrumented, and tests
 * run gateways with and without tracing side by side. What is never recorded: credentials, tool
 * arguments, query values, log or file contents, error messages (they may quote names): see docs/tracing.md.
 */
export interface GatewayTracing {
  /** Spans every MCP operation (the observer's `tracer`). */
  readonly operations: OperationTracer;
  /** A child span per Dagu request made inside an operation (the Dagu client's `traceRequest` hook). */
  traceRequest(route: string): UpstreamTrace | undefined;
  /** Marks on the current operation's span that a Dagu GET joined another call's request. */
  joined(route: string): void;
  /** `trace_id` and `span_id` of the operation being served, for every log line written meanwhile (pino mixin). */
  logFields(): Record<string, string>;
  /**
   * `trace_id` of the host's trace named by an HTTP request's `traceparent` header, for the request's own
   * log lines (`incoming request`, `request completed`): written outside any call, they join the trace
   * the request's calls continue. Empty without a valid header.
   */
  hostTraceFields(traceparent: unknown): Record<string, string>;
  /** Sends what is buffered, then stops (pending spans are exported first). */
  shutdown(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The host's context: `_meta.traceparent` of the message, else the HTTP request's `traceparent`. */
function parentOf(facts: McpRequestFacts | undefined): Context {
  if (facts?.traceparent === undefined) return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent: facts.traceparent };
  if (facts.tracestate !== undefined) carrier.tracestate = facts.tracestate;
  return propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

const sampled = (span: Span) => (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;

/** The span's name: `{mcp.method.name} {gen_ai.tool.name}` (a low-cardinality name; no URI, no target). */
const spanName = (method: string, tool: string | undefined) =>
  tool === undefined ? method : `${method} ${tool}`;

function startAttributes(
  method: OperationRecord['method'],
  tool: string | undefined,
  facts: McpRequestFacts | undefined,
): Attributes {
  const attributes: Attributes = { 'mcp.method.name': method };
  if (tool !== undefined) {
    attributes['gen_ai.tool.name'] = tool;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  }
  if (facts !== undefined) {
    if (facts.rpcId !== undefined) attributes['jsonrpc.request.id'] = String(facts.rpcId);
    if (facts.protocolVersion !== undefined) attributes['mcp.protocol.version'] = facts.protocolVersion;
    // Who called, by name (key name, JWT subject, `anonymous`, `stdio`): never a credential.
    attributes['enduser.id'] = facts.identity;
    attributes['dagu_mcp.identity.kind'] = facts.identityKind;
    attributes['dagu_mcp.role'] = facts.role;
    attributes['dagu_mcp.request_id'] = facts.requestId;
    if (facts.clientName !== undefined) attributes['dagu_mcp.client.name'] = facts.clientName;
  }
  return attributes;
}

/** What the finished operation adds: its target, the resource URI without its query, the outcome. */
function finish(span: Span, record: OperationRecord): void {
  const { outcome } = record;
  const { facts } = outcome;
  if (facts.target !== undefined) span.setAttribute('dagu_read.target', facts.target);
  // resources/read only: the resource's address, without its query.
  if (record.method === 'resources/read' && facts.uri !== undefined) {
    span.setAttribute('mcp.resource.uri', facts.uri.split('?')[0]!);
  }
  if (facts.upstreamStatus !== undefined)
    span.setAttribute('dagu_read.upstream_status', facts.upstreamStatus);
  if (!outcome.ok) {
    // The contract's code only: the message may quote DAG, run or step names.
    span.setAttribute('error.type', outcome.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.code });
  }
}

/** OTLP over HTTP to the configured endpoint, with the bodies `OTEL_EXPORTER_OTLP_PROTOCOL` names. */
function exporterOf(config: TracingConfig): JsonExporter | ProtobufExporter {
  const options = { url: config.endpoint, headers: config.headers, timeoutMillis: config.timeoutMs };
  return config.protocol === 'http/protobuf' ? new ProtobufExporter(options) : new JsonExporter(options);
}

/** The provider that batches spans to the OTLP/HTTP endpoint of the configuration. */
function providerOf(config: TracingConfig): TracerProvider {
  return new TracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'service.version': GATEWAY_VERSION,
    }),
    sampler: samplerOf(config),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporterOf(config),
        ...config.batch,
      }),
    ],
  });
}

/** How a Dagu request's span ends: its status, or the kind of failure when Dagu did not answer. */
function endRequestSpan(span: Span, status: number | undefined, failure: string | undefined): void {
  if (status !== undefined) {
    span.setAttribute('http.response.status_code', status);
    if (status >= 400) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  } else {
    span.setAttribute('error.type', failure ?? 'error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure ?? 'error' });
  }
  span.end();
}

export function createTracing(config: TracingConfig, daguUrl: string): GatewayTracing {
  const provider = providerOf(config);
  const tracer: Tracer = provider.getTracer('dagu-mcp-gateway', GATEWAY_VERSION);
  /** The operation being served: its span parents the Dagu requests and names the log lines' trace. */
  const current = new AsyncLocalStorage<Span>();
  const dagu = new URL(daguUrl);
  const daguPort = Number(dagu.port || (dagu.protocol === 'https:' ? 443 : 80));

  const operations: OperationTracer = {
    start(method, tool, facts): OperationTrace {
      const span = tracer.startSpan(
        spanName(method, tool),
        { kind: SpanKind.SERVER, attributes: startAttributes(method, tool, facts) },
        parentOf(facts),
      );
      return {
        traceId: sampled(span) ? span.spanContext().traceId : undefined,
        run: (operation) => current.run(span, operation),
        end(record) {
          finish(span, record);
          span.end();
        },
      };
    },
  };

  return {
    operations,
    traceRequest(route) {
      const parent = current.getStore();
      // Readiness probes and dialect detection outside any call are not traced.
      if (parent === undefined || !parent.isRecording()) return undefined;
      const span = tracer.startSpan(
        `GET ${route}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'GET',
            // The route template (`/dags/{fileName}/spec`), never the path with its names.
            'url.template': route,
            'server.address': dagu.hostname,
            'server.port': daguPort,
          },
        },
        trace.setSpan(ROOT_CONTEXT, parent),
      );
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
      return { headers, end: (status, failure) => endRequestSpan(span, status, failure) };
    },
    joined(route) {
      current.getStore()?.addEvent('dagu.request.joined', { 'url.template': route });
    },
    logFields(): Record<string, string> {
      const span = current.getStore();
      // A fresh object each time: pino merges the line's own fields into it.
      if (span === undefined) return {};
      const context = span.spanContext();
      return { trace_id: context.traceId, span_id: context.spanId };
    },
    hostTraceFields(traceparent): Record<string, string> {
      if (typeof traceparent !== 'string') return {};
      const host = trace.getSpanContext(
        propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter),
      );
      return host !== undefined && isSpanContextValid(host) ? { trace_id: host.traceId } : {};
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
