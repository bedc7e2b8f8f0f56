/** The standard OTEL_* variables, checked and turned into the tracing configuration. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OTLP_PROTOCOLS, tracingFromEnv } from '../../src/otel-settings.ts';

function read(env: NodeJS.ProcessEnv) {
  const problems: string[] = [];
  return { config: tracingFromEnv(env, problems), problems };
}

describe('tracingFromEnv: on or off', () => {
  test('off without an endpoint or exporter, and when disabled or exporter none', () => {
    assert.deepEqual(read({}), { config: undefined, problems: [] });
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }).config,
      undefined,
    );
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).config,
      undefined,
    );
    assert.equal(read({ OTEL_EXPORTER_OTLP_ENDPOINT: '   ' }).config, undefined);
  });

  test('exporter otlp alone sends to the default local collector, with the defaults', () => {
    const { config, problems } = read({ OTEL_TRACES_EXPORTER: 'otlp' });
    assert.deepEqual(problems, []);
    assert.deepEqual(config, {
      endpoint: 'http://localhost:4318/v1/traces',
      headers: {},
      protocol: 'http/json',
      timeoutMs: 10_000,
      serviceName: 'dagu-mcp-gateway',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: {
        scheduledDelayMillis: 5000,
        exportTimeoutMillis: 30_000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
      },
    });
  });
});

describe('tracingFromEnv: values', () => {
  test('the base endpoint gets /v1/traces; a traces endpoint is used as given', () => {
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example:4318//' }).config?.endpoint,
      'https://c.example:4318/v1/traces',
    );
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/x' })
        .config?.endpoint,
      'http://b/x',
    );
  });

  test('headers and resource attributes are key=value pairs with percent-encoded values; traces headers win', () => {
    const { config, problems } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'ignored=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer%20abc, x-team = ops ,',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.version=1.2',
      OTEL_SERVICE_NAME: 'gw-eu',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(config?.headers, { authorization: 'Bearer abc', 'x-team': 'ops' });
    assert.deepEqual(config?.resourceAttributes, {
      'deployment.environment': 'prod',
      'service.version': '1.2',
    });
    assert.equal(config?.serviceName, 'gw-eu');
    assert.equal(config?.sampler, 'traceidratio');
    assert.equal(config?.samplerRatio, 0.25);
    assert.equal(config?.timeoutMs, 2000);
    assert.equal(config?.batch.maxQueueSize, 100);
  });

  test('the traces timeout wins over the general one', () => {
    const env = {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '300',
    };
    assert.equal(read(env).config?.timeoutMs, 300);
  });
});

describe('tracingFromEnv: problems', () => {
  test('each wrong value is named; a header value never appears in a problem', () => {
    const { problems } = read({
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_SAMPLER_ARG: '2',
      OTEL_BSP_SCHEDULE_DELAY: '-5',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=%E0%A4secret',
      OTEL_RESOURCE_ATTRIBUTES: 'novalue',
    });
    assert.deepEqual(problems, [
      'OTEL_TRACES_EXPORTER: must be otlp or none (got "zipkin")',
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/json or http/protobuf, the OTLP protocols the gateway sends (got "grpc")',
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL',
      'OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (got "sometimes")',
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (got "2")',
      'OTEL_EXPORTER_OTLP_HEADERS: a value is not valid percent-encoding',
      'OTEL_RESOURCE_ATTRIBUTES: must be key=value pairs separated by commas',
      'OTEL_BSP_SCHEDULE_DELAY: must be a positive integer (got "-5")',
    ]);
    assert.ok(problems.every((problem) => !problem.includes('secret')));
  });

  test('a protocol of http/json is accepted; a non-number sampler arg is refused', () => {
    assert.deepEqual(
      read({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }).problems,
      [],
    );
    assert.equal(read({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER_ARG: 'half' }).problems.length, 1);
  });
});

// The OTLP protocol: JSON bodies unless the variables name protobuf (the traces variable before the
// general one); gRPC, which the gateway does not speak, is refused with the variable's name.
const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.invalid:4318' };

function tracingAt(env: Record<string, string>) {
  const problems: string[] = [];
  const config = tracingFromEnv({ ...ENDPOINT, ...env }, problems);
  return { config, problems };
}

test('JSON by default; protobuf when OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names it', () => {
  assert.deepEqual(OTLP_PROTOCOLS, ['http/json', 'http/protobuf']);
  assert.equal(tracingAt({}).config?.protocol, 'http/json');
  assert.equal(tracingAt({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).config?.protocol, 'http/protobuf');
  const both = tracingAt({
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
  });
  assert.equal(both.config?.protocol, 'http/protobuf');
  assert.deepEqual(both.problems, []);
  // The endpoint is the same for both encodings.
  assert.equal(
    tracingAt({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).config?.endpoint,
    'http://collector.invalid:4318/v1/traces',
  );
});

test('gRPC and unknown protocols are refused, naming the variable and the accepted values', () => {
  for (const protocol of ['grpc', 'http/xml', 'HTTP/JSON']) {
    const { problems } = tracingAt({ OTEL_EXPORTER_OTLP_PROTOCOL: protocol });
    assert.equal(problems.length, 1, protocol);
    assert.match(problems[0]!, /^OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json or http\/protobuf/);
    assert.ok(problems[0]!.includes(JSON.stringify(protocol)));
  }
});
