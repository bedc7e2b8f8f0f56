// The OTLP protocol the OTEL_* variables choose: JSON bodies unless they name protobuf (the traces
// variable before the general one); gRPC, which the gateway does not speak, is refused at start-up
// with the variable's name. (The bodies themselves reach a real Jaeger in test/integration/trace.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OTLP_PROTOCOLS, tracingFromEnv } from '../../../src/otel-settings.ts';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.invalid:4318' };

function tracing(env: Record<string, string>) {
  const problems: string[] = [];
  const config = tracingFromEnv({ ...ENDPOINT, ...env }, problems);
  return { config, problems };
}

test('JSON by default; protobuf when OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names it', () => {
  assert.deepEqual(OTLP_PROTOCOLS, ['http/json', 'http/protobuf']);
  assert.equal(tracing({}).config?.protocol, 'http/json');
  assert.equal(tracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).config?.protocol, 'http/protobuf');
  const both = tracing({
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
  });
  assert.equal(both.config?.protocol, 'http/protobuf');
  assert.deepEqual(both.problems, []);
  // The endpoint is the same for both encodings.
  assert.equal(
    tracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).config?.endpoint,
    'http://collector.invalid:4318/v1/traces',
  );
});

test('gRPC and unknown protocols are refused, naming the variable and the accepted values', () => {
  for (const protocol of ['grpc', 'http/xml', 'HTTP/JSON']) {
    const { problems } = tracing({ OTEL_EXPORTER_OTLP_PROTOCOL: protocol });
    assert.equal(problems.length, 1, protocol);
    assert.match(problems[0]!, /^OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json or http\/protobuf/);
    assert.ok(problems[0]!.includes(JSON.stringify(protocol)));
  }
});
