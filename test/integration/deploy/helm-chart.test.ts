// deploy/helm/dagu-mcp-gateway checked with a real Helm (v3.22.0 built from the Go module proxy by
// scripts/deploy-tools.sh): `helm lint`, then `helm template` renders parsed and asserted object by
// object, the rendered configuration loaded by the gateway's own loadConfig, and the chart set beside
// Dagu's own chart (rendered from the Dagu v2.15.1 sources in ../shared/dagu) to see that the default
// Dagu URL and the NetworkPolicy's egress point at what that chart creates.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseApiKeys } from '../../../src/auth/api-keys.ts';
import { loadConfig } from '../../../src/config.ts';
import { TRACE_SAMPLERS } from '../../../src/otel-settings.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import {
  deployTool,
  namesTheGatewayReads,
  ROOT,
  readRepoFile,
  readRepoYaml,
  repoPath,
  run,
} from '../../support/deploy-tools.ts';

const CHART = repoPath('deploy', 'helm', 'dagu-mcp-gateway');
const CI_VALUES = join(CHART, 'ci', 'api-keys-values.yaml');
// A Helm built with `go install` carries no Kubernetes version of its own (it assumes v1.20); the
// chart asks for 1.25 or newer (autoscaling/v2, policy/v1).
const KUBE_VERSION = '1.30.0';

const helm = deployTool('helm');
const skip = skipUnlessCI(helm.reason);

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects are checked field by field
type K8s = any;

function template(
  args: string[],
  release = 'mcp',
): { status: number | null; objects: K8s[]; stderr: string } {
  const result = run(helm.path!, [
    'template',
    release,
    CHART,
    '--namespace',
    'tools',
    '--kube-version',
    KUBE_VERSION,
    ...args,
  ]);
  const objects =
    result.status === 0
      ? parseAllDocuments(result.stdout)
          .map((document) => document.toJS() as K8s)
          .filter((object) => object !== null)
      : [];
  return { status: result.status, objects, stderr: result.stderr };
}

const byKind = (objects: K8s[], kind: string): K8s[] => objects.filter((object) => object.kind === kind);
const one = (objects: K8s[], kind: string): K8s => {
  const found = byKind(objects, kind);
  assert.equal(found.length, 1, `one ${kind}, got ${found.length}`);
  return found[0];
};
const containerOf = (objects: K8s[]) => one(objects, 'Deployment').spec.template.spec.containers[0];

/** The environment the container gets, Secret references resolved against the rendered Secret. */
function containerEnvironment(objects: K8s[]): Record<string, string> {
  const container = containerOf(objects);
  const configMap = one(objects, 'ConfigMap');
  const secrets = byKind(objects, 'Secret');
  const env: Record<string, string> = {};
  for (const source of container.envFrom) {
    assert.equal(source.configMapRef.name, configMap.metadata.name);
    Object.assign(env, configMap.data);
  }
  for (const entry of container.env) {
    if (entry.value !== undefined) env[entry.name] = entry.value.replace('$(POD_IP)', '10.1.2.3');
    else if (entry.valueFrom.secretKeyRef) {
      const ref = entry.valueFrom.secretKeyRef;
      const secret = secrets.find((candidate) => candidate.metadata.name === ref.name);
      const data = secret?.data?.[ref.key];
      if (data !== undefined) env[entry.name] = Buffer.from(data, 'base64').toString('utf8');
      else
        assert.equal(ref.optional, true, `${entry.name}: ${ref.name}/${ref.key} is missing and not optional`);
    }
  }
  return env;
}

describe('the Helm chart', { skip }, () => {
  test('helm lint --strict passes', () => {
    for (const values of [[], ['-f', CI_VALUES]]) {
      const result = run(helm.path!, ['lint', '--strict', '--kube-version', KUBE_VERSION, CHART, ...values]);
      assert.equal(result.status, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  const full = template(['-f', CI_VALUES]);

  test('it renders the objects the gateway needs, monitoring included when asked', () => {
    assert.equal(full.status, 0, full.stderr);
    assert.deepEqual(full.objects.map((object) => object.kind).sort(), [
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'PrometheusRule',
      'Secret',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
    for (const object of full.objects) assert.equal(object.metadata.name, 'mcp-dagu-mcp-gateway');
    const plain = template(['--set-string', 'auth.jwtSecret=0123456789abcdef0123456789abcdef']);
    assert.equal(plain.status, 0, plain.stderr);
    assert.deepEqual(byKind(plain.objects, 'ServiceMonitor'), []);
    assert.deepEqual(byKind(plain.objects, 'PrometheusRule'), []);
  });

  test('the pod runs as non-root on a read-only root filesystem, with resources and both probes', () => {
    const pod = one(full.objects, 'Deployment').spec.template.spec;
    const container = containerOf(full.objects);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(pod.securityContext.runAsUser > 0);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
    assert.ok(container.resources.requests.cpu && container.resources.requests.memory);
    assert.ok(container.resources.limits.memory);
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'http' });
    assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'http' });
    const port = container.ports.find((candidate: K8s) => candidate.name === 'http');
    assert.equal(String(port.containerPort), one(full.objects, 'ConfigMap').data.PORT);
    assert.equal(one(full.objects, 'Service').spec.ports[0].targetPort, 'http');
    assert.ok(pod.volumes.some((volume: K8s) => volume.name === 'tmp' && volume.emptyDir));
  });

  test('probe periods and the grace period agree with the drain (DRAIN_MS, REQUEST_TIMEOUT_MS)', () => {
    const pod = one(full.objects, 'Deployment').spec.template.spec;
    const container = containerOf(full.objects);
    const config = loadConfig(containerEnvironment(full.objects));
    const probe = container.readinessProbe;
    // The readiness probe fails, and the pod leaves the Service, while the gateway still serves.
    assert.ok(
      probe.periodSeconds * probe.failureThreshold * 1000 < config.http.drainMs,
      `readiness fails after ${probe.periodSeconds * probe.failureThreshold} s; DRAIN_MS ${config.http.drainMs}`,
    );
    // Kubernetes' SIGKILL comes after the drain and the longest call.
    const gatewayStops = (config.http.drainMs + config.http.requestTimeoutMs) / 1000;
    assert.ok(
      pod.terminationGracePeriodSeconds > gatewayStops,
      `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds}; the gateway stops by ${gatewayStops} s`,
    );
  });

  test('every setting it gives the gateway is one the gateway reads, and the gateway accepts them', () => {
    const env = containerEnvironment(full.objects);
    const reads = namesTheGatewayReads();
    const unknown = Object.keys(env).filter((name) => name !== 'POD_IP' && !reads.has(name));
    assert.deepEqual(unknown, [], 'names the gateway never reads');
    const config = loadConfig(env);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dagu.url, 'http://dagu-ui:8080');
    assert.equal(config.dagu.token, 'dagu_example_token');
    assert.ok(config.allowedHosts.includes('10.1.2.3'), 'the pod IP (probes, Prometheus)');
    assert.ok(config.allowedHosts.includes('mcp-dagu-mcp-gateway.tools.svc.cluster.local'));
    // The key file is mounted where AUTH_API_KEYS_FILE says, and holds a file the gateway accepts.
    const container = containerOf(full.objects);
    const pod = one(full.objects, 'Deployment').spec.template.spec;
    const mount = container.volumeMounts.find((candidate: K8s) => candidate.name === 'api-keys');
    const volume = pod.volumes.find((candidate: K8s) => candidate.name === 'api-keys');
    assert.equal(config.auth.apiKeysFile, `${mount.mountPath}/${volume.secret.items[0].path}`);
    const secret = one(full.objects, 'Secret');
    const keysFile = Buffer.from(secret.data[volume.secret.items[0].key], 'base64').toString('utf8');
    assert.equal(parseApiKeys(keysFile, 'keys.yaml').entries.length, 1);
  });

  test('NetworkPolicy: ingress to the gateway port; egress to Dagu and DNS only', () => {
    const policy = one(full.objects, 'NetworkPolicy').spec;
    assert.deepEqual(
      policy.podSelector.matchLabels,
      one(full.objects, 'Deployment').spec.selector.matchLabels,
    );
    assert.deepEqual(policy.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.ingress, [{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    assert.equal(policy.egress.length, 2);
    for (const rule of policy.egress) {
      assert.ok(rule.to?.length > 0 && rule.ports?.length > 0, 'no rule opens everything');
    }
    const [dagu, dns] = policy.egress;
    assert.deepEqual(dagu.to, [
      {
        podSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'dagu', 'app.kubernetes.io/component': 'ui' },
        },
      },
    ]);
    assert.deepEqual(dagu.ports, [{ port: 8080, protocol: 'TCP' }]);
    assert.deepEqual(dns.to, [
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    assert.deepEqual(dns.ports, [
      { port: 53, protocol: 'UDP' },
      { port: 53, protocol: 'TCP' },
    ]);
    const restricted = template([
      '-f',
      CI_VALUES,
      '--set',
      'networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.team=agents',
    ]);
    assert.deepEqual(one(restricted.objects, 'NetworkPolicy').spec.ingress[0].from, [
      { namespaceSelector: { matchLabels: { team: 'agents' } } },
    ]);
  });

  test('HPA scales the Deployment (which then leaves replicas to it); the PDB needs two replicas', () => {
    const hpa = one(full.objects, 'HorizontalPodAutoscaler').spec;
    const deployment = one(full.objects, 'Deployment');
    assert.deepEqual(hpa.scaleTargetRef, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    assert.equal(hpa.minReplicas, 2);
    assert.equal(hpa.maxReplicas, 6);
    assert.equal(hpa.metrics[0].resource.name, 'cpu');
    assert.equal(deployment.spec.replicas, undefined);
    const pdb = one(full.objects, 'PodDisruptionBudget').spec;
    assert.deepEqual(pdb.selector.matchLabels, deployment.spec.selector.matchLabels);
    assert.equal(pdb.minAvailable, 1);

    const single = template([
      '-f',
      CI_VALUES,
      '--set',
      'autoscaling.enabled=false',
      '--set',
      'replicaCount=1',
    ]);
    assert.equal(one(single.objects, 'Deployment').spec.replicas, 1);
    assert.deepEqual(byKind(single.objects, 'HorizontalPodAutoscaler'), []);
    assert.deepEqual(
      byKind(single.objects, 'PodDisruptionBudget'),
      [],
      'a PDB over one replica blocks drains',
    );
  });

  test('ServiceMonitor scrapes the Service port; PrometheusRule carries the rules file unchanged', () => {
    const monitor = one(full.objects, 'ServiceMonitor').spec;
    const service = one(full.objects, 'Service');
    for (const [label, value] of Object.entries(monitor.selector.matchLabels)) {
      assert.equal(service.metadata.labels[label], value);
    }
    assert.deepEqual(
      monitor.endpoints.map((endpoint: K8s) => [endpoint.port, endpoint.path]),
      [[service.spec.ports[0].name, '/metrics']],
    );
    const rules = readRepoYaml<{ groups: unknown[] }>(
      'deploy',
      'prometheus',
      'rules',
      'dagu-mcp-gateway.rules.yml',
    );
    assert.deepEqual(one(full.objects, 'PrometheusRule').spec.groups, rules.groups);
  });

  test('an existing Secret replaces the chart’s, its keys optional except the key file', () => {
    const rendered = template(['--set', 'existingSecret.name=gateway-credentials']);
    assert.equal(rendered.status, 0, rendered.stderr);
    assert.deepEqual(byKind(rendered.objects, 'Secret'), []);
    const container = containerOf(rendered.objects);
    const refs = container.env
      .filter((entry: K8s) => entry.valueFrom?.secretKeyRef)
      .map((entry: K8s) => [entry.name, entry.valueFrom.secretKeyRef]);
    assert.deepEqual(refs, [
      ['DAGU_API_TOKEN', { name: 'gateway-credentials', key: 'dagu-api-token', optional: true }],
      ['AUTH_JWT_SECRET', { name: 'gateway-credentials', key: 'jwt-secret', optional: true }],
      ['RATE_LIMIT_REDIS_URL', { name: 'gateway-credentials', key: 'redis-url', optional: true }],
    ]);
    const volume = one(rendered.objects, 'Deployment').spec.template.spec.volumes.find(
      (candidate: K8s) => candidate.name === 'api-keys',
    );
    assert.equal(volume.secret.secretName, 'gateway-credentials');
    assert.equal(volume.secret.optional, undefined);
  });

  test('a Redis URL for the shared rate limit goes into the Secret', () => {
    const rendered = template([
      '-f',
      CI_VALUES,
      '--set',
      'rateLimit.redisUrl=redis://:pw@redis-master:6379/0',
    ]);
    const secret = one(rendered.objects, 'Secret');
    assert.equal(
      Buffer.from(secret.data['redis-url'], 'base64').toString('utf8'),
      'redis://:pw@redis-master:6379/0',
    );
    const entry = containerOf(rendered.objects).env.find(
      (candidate: K8s) => candidate.name === 'RATE_LIMIT_REDIS_URL',
    );
    assert.deepEqual(entry.valueFrom.secretKeyRef, {
      name: secret.metadata.name,
      key: 'redis-url',
      optional: false,
    });
    assert.ok(
      !JSON.stringify(one(rendered.objects, 'ConfigMap')).includes('redis://'),
      'not in the ConfigMap',
    );
    // The gateway reads it under that name and keeps the limit in Redis.
    const env = containerEnvironment(rendered.objects);
    const reads = namesTheGatewayReads();
    assert.deepEqual(
      Object.keys(env).filter((name) => name !== 'POD_IP' && !reads.has(name)),
      [],
    );
    assert.equal(loadConfig(env).rateLimitRedisUrl, 'redis://:pw@redis-master:6379/0');
  });

  test('tracing: off by default (no OTEL_ variable); on, the OTEL_* values, headers from a Secret, egress to the collector', () => {
    const otel = (objects: K8s[]) =>
      [
        ...containerOf(objects).env.map((entry: K8s) => entry.name as string),
        ...Object.keys(one(objects, 'ConfigMap').data),
      ].filter((name) => name.startsWith('OTEL_'));
    assert.deepEqual(otel(full.objects), []);
    assert.equal(loadConfig(containerEnvironment(full.objects)).tracing, undefined);

    const on = template([
      '-f',
      CI_VALUES,
      '--set',
      'tracing.enabled=true',
      '--set',
      'tracing.endpoint=http://jaeger-collector.tracing:4318',
      '--set',
      'tracing.serviceName=mcp-gateway-prod',
      '--set',
      'tracing.sampler=parentbased_traceidratio',
      '--set-string',
      'tracing.samplerArg=0.25',
      '--set',
      'tracing.headersSecret.name=otlp-credentials',
      '--set',
      'tracing.egressTo[0].namespaceSelector.matchLabels.team=tracing',
    ]);
    assert.equal(on.status, 0, on.stderr);
    assert.deepEqual(otel(on.objects).sort(), [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_SERVICE_NAME',
      'OTEL_TRACES_SAMPLER',
      'OTEL_TRACES_SAMPLER_ARG',
    ]);
    // The headers (the collector's credential) come from the operator's Secret, never a value.
    const headers = containerOf(on.objects).env.find(
      (entry: K8s) => entry.name === 'OTEL_EXPORTER_OTLP_HEADERS',
    );
    assert.deepEqual(headers, {
      name: 'OTEL_EXPORTER_OTLP_HEADERS',
      valueFrom: { secretKeyRef: { name: 'otlp-credentials', key: 'otlp-headers' } },
    });
    // The gateway reads them all and traces as asked, the headers as the operator's Secret gives them.
    const operatorSecret = {
      kind: 'Secret',
      metadata: { name: 'otlp-credentials' },
      data: { 'otlp-headers': Buffer.from('x-api-key=from-the-secret').toString('base64') },
    };
    const env = containerEnvironment([...on.objects, operatorSecret]);
    const reads = namesTheGatewayReads();
    assert.deepEqual(
      Object.keys(env).filter((name) => name !== 'POD_IP' && !reads.has(name)),
      [],
    );
    const tracing = loadConfig(env).tracing;
    assert.equal(tracing?.endpoint, 'http://jaeger-collector.tracing:4318/v1/traces');
    assert.equal(tracing?.serviceName, 'mcp-gateway-prod');
    assert.equal(tracing?.sampler, 'parentbased_traceidratio');
    assert.equal(tracing?.samplerRatio, 0.25);
    assert.deepEqual(tracing?.headers, { 'x-api-key': 'from-the-secret' });
    // Egress to the collector's port, to the peers given.
    const egress = one(on.objects, 'NetworkPolicy').spec.egress;
    assert.equal(egress.length, 3);
    assert.deepEqual(egress[2], {
      ports: [{ port: 4318, protocol: 'TCP' }],
      to: [{ namespaceSelector: { matchLabels: { team: 'tracing' } } }],
    });
    // Without headers, a sampler argument or peers: none rendered; an https endpoint's default port.
    const plain = template([
      '-f',
      CI_VALUES,
      '--set',
      'tracing.enabled=true',
      '--set',
      'tracing.endpoint=https://otlp.example.com',
    ]);
    assert.deepEqual(otel(plain.objects).sort(), [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_SERVICE_NAME',
      'OTEL_TRACES_SAMPLER',
    ]);
    assert.deepEqual(one(plain.objects, 'NetworkPolicy').spec.egress[2], {
      ports: [{ port: 443, protocol: 'TCP' }],
    });
    assert.equal(loadConfig(containerEnvironment(plain.objects)).tracing?.sampler, 'parentbased_always_on');
    // The schema offers the samplers the gateway accepts, no more and no fewer.
    const schema = JSON.parse(readRepoFile('deploy', 'helm', 'dagu-mcp-gateway', 'values.schema.json'));
    assert.deepEqual(schema.properties.tracing.properties.sampler.enum, [...TRACE_SAMPLERS]);
  });

  test('tracing refusals: no endpoint, headers or the chart’s OTEL_ names under config, an unknown sampler', () => {
    const cases: Array<[string[], RegExp]> = [
      [['-f', CI_VALUES, '--set', 'tracing.enabled=true'], /set tracing\.endpoint/],
      [
        ['-f', CI_VALUES, '--set-string', 'config.OTEL_EXPORTER_OTLP_HEADERS=x-api-key=clear'],
        /invalid propertyName 'OTEL_EXPORTER_OTLP_HEADERS'/,
      ],
      [
        ['-f', CI_VALUES, '--set-string', 'config.OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318'],
        /invalid propertyName 'OTEL_EXPORTER_OTLP_ENDPOINT'/,
      ],
      [['-f', CI_VALUES, '--set', 'tracing.sampler=sometimes'], /sampler/],
      [['-f', CI_VALUES, '--set', 'tracing.endpoint=jaeger:4318'], /endpoint/],
      [
        ['-f', CI_VALUES, '--set', 'tracing.headers=x-api-key=clear'],
        /additional properties 'headers' not allowed/,
      ],
    ];
    for (const [args, reason] of cases) {
      const rendered = template(args);
      assert.notEqual(rendered.status, 0, `helm template ${args.join(' ')} rendered`);
      assert.match(rendered.stderr, reason);
    }
  });

  test('values.yaml and the chart README say that replicas limit alone without Redis', () => {
    for (const text of [
      readRepoFile('deploy', 'helm', 'dagu-mcp-gateway', 'values.yaml'),
      readRepoFile('deploy', 'helm', 'dagu-mcp-gateway', 'README.md'),
    ]) {
      assert.match(
        text.replace(/\s+/g, ' '),
        /each (replica|one) (keeps its own|limits)[^.]*rateLimit\.redisUrl|rateLimit\.redisUrl[^.]*/i,
      );
      assert.match(text, /RATE_LIMIT_PER_MINUTE/);
    }
  });

  test('refusals: no caller authentication, an unknown value, a short JWT secret, a setting the chart owns', () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /the gateway serves no anonymous callers off loopback/],
      [['-f', CI_VALUES, '--set', 'replicas=3'], /additional properties 'replicas' not allowed/],
      [['--set-string', 'auth.jwtSecret=short'], /jwtSecret/],
      [
        ['-f', CI_VALUES, '--set-string', 'config.DAGU_URL=http://elsewhere'],
        /invalid propertyName 'DAGU_URL'/,
      ],
      [['-f', CI_VALUES, '--set', 'securityContext.readOnlyRootFilesystem=false'], /readOnlyRootFilesystem/],
    ];
    for (const [args, reason] of cases) {
      const rendered = template(args);
      assert.notEqual(rendered.status, 0, `helm template ${args.join(' ')} rendered`);
      assert.match(rendered.stderr, reason);
    }
  });
});

// ---- beside Dagu's own chart ------------------------------------------------------------------

const DAGU_SOURCES = join(ROOT, '..', 'shared', 'dagu');
const daguArchive = existsSync(DAGU_SOURCES)
  ? readdirSync(DAGU_SOURCES).find((name) => /^dagu-v2\.[\d.]+-src\.tar\.gz$/.test(name))
  : undefined;

describe('beside Dagu’s own chart', {
  skip: skip || skipUnlessCI(daguArchive ? false : `no Dagu 2.x sources in ${DAGU_SOURCES}`),
}, () => {
  const work = mkdtempSync(join(tmpdir(), 'dagu-chart-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  test('the default dagu.url and the NetworkPolicy egress match what `helm template dagu` of Dagu’s chart creates', () => {
    const unpacked = spawnSync(
      'tar',
      ['-xzf', join(DAGU_SOURCES, daguArchive!), '-C', work, '--wildcards', '*/charts/dagu/*'],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(unpacked.status, 0, unpacked.stderr);
    const chartDir = join(work, readdirSync(work)[0]!, 'charts', 'dagu');
    const dagu = run(helm.path!, [
      'template',
      'dagu',
      chartDir,
      '--namespace',
      'tools',
      '--kube-version',
      KUBE_VERSION,
    ]);
    assert.equal(dagu.status, 0, dagu.stderr);
    const objects = parseAllDocuments(dagu.stdout)
      .map((document) => document.toJS() as K8s)
      .filter((object) => object !== null);
    const ours = template(['-f', CI_VALUES]).objects;
    const url = new URL(one(ours, 'ConfigMap').data.DAGU_URL);
    const service = byKind(objects, 'Service').find((candidate) => candidate.metadata.name === url.hostname);
    assert.ok(service, `Dagu's chart has a Service ${url.hostname}`);
    const servicePort = service.spec.ports.find((port: K8s) => String(port.port) === url.port);
    assert.ok(servicePort, `…listening on ${url.port}`);

    // The pods behind that Service carry the labels our egress rule selects, on the port it opens.
    const egress = one(ours, 'NetworkPolicy').spec.egress[0];
    const wanted = egress.to[0].podSelector.matchLabels as Record<string, string>;
    const pods = byKind(objects, 'Deployment').filter((deployment) =>
      Object.entries(service.spec.selector).every(
        ([key, value]) => deployment.spec.template.metadata.labels[key] === value,
      ),
    );
    assert.equal(pods.length, 1);
    const podLabels = pods[0].spec.template.metadata.labels;
    for (const [key, value] of Object.entries(wanted)) assert.equal(podLabels[key], value, key);
    const containerPorts = pods[0].spec.template.spec.containers.flatMap(
      (container: K8s) => container.ports ?? [],
    );
    const target = containerPorts.find(
      (port: K8s) => port.name === servicePort.targetPort || port.containerPort === servicePort.targetPort,
    );
    assert.equal(target?.containerPort, egress.ports[0].port);
  });
});

test('the READMEs say to pass --kube-version (a Helm built from source defaults to Kubernetes v1.20.0)', () => {
  const chart = readRepoFile('deploy', 'helm', 'dagu-mcp-gateway', 'Chart.yaml');
  assert.match(chart, /^kubeVersion: ">=1\.25\.0-0"$/m);
  for (const readme of [
    readRepoFile('README.md'),
    readRepoFile('deploy', 'helm', 'dagu-mcp-gateway', 'README.md'),
  ])
    assert.ok(
      readme.includes(`helm template mcp deploy/helm/dagu-mcp-gateway --kube-version ${KUBE_VERSION}`),
    );
});
