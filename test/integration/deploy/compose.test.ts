// docker-compose.yml as shipped: parsed and checked (image pins, every mounted file exists, ports on
// loopback and consistent with the scrape config and the Grafana data source, every environment name
// given to the gateway is one the gateway reads), validated by the real `docker-compose config`
// (Debian's docker-compose; no Docker engine runs here, so the stack itself is not started), and the
// Dockerfile it builds checked the same way. The stack's Jaeger: pinned to the release the tests run,
// its configuration file (run by the real Jaeger in test/integration/trace) receiving where the
// gateway's OTEL_EXPORTER_OTLP_ENDPOINT sends.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import picomatch from 'picomatch';
import { loadConfig } from '../../../src/config.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import {
  deployTool,
  namesTheGatewayReads,
  readRepoFile,
  readRepoYaml,
  repoPath,
  run,
} from '../../support/deploy-tools.ts';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[] | Record<string, { condition: string }>;
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = readRepoYaml<ComposeFile>('docker-compose.yml');

interface JaegerConfig {
  service: { pipelines: { traces: { receivers: string[] } } };
  receivers: { otlp: { protocols: Record<string, { endpoint: string }> & { http: { endpoint: string } } } };
  extensions: {
    jaeger_storage: { backends: Record<string, Record<string, unknown>> };
    jaeger_query: { storage: { traces: string }; http: { endpoint: string } };
  };
}
const services = compose.services;

/** `host:port:container` or `host_ip:host_port:container_port` → parts. */
function parsePort(spec: string): { ip: string | undefined; host: string; container: string } {
  const parts = spec.replace(/\/(tcp|udp)$/, '').split(':');
  if (parts.length === 3) return { ip: parts[0], host: parts[1]!, container: parts[2]! };
  if (parts.length === 2) return { ip: undefined, host: parts[0]!, container: parts[1]! };
  return { ip: undefined, host: parts[0]!, container: parts[0]! };
}

describe('docker-compose.yml', () => {
  test('the services of the stack are there', () => {
    assert.deepEqual(Object.keys(services).sort(), [
      'dagu',
      'gateway',
      'grafana',
      'init',
      'jaeger',
      'prometheus',
    ]);
  });

  test('every image is pinned to a release; Dagu is the 2.15.1 the tests run', () => {
    assert.equal(services.dagu?.image, 'ghcr.io/dagucloud/dagu:2.15.1');
    for (const [name, service] of Object.entries(services)) {
      if (service.build !== undefined) continue; // built here from the Dockerfile (its base is pinned)
      assert.match(service.image ?? '', /^[a-z0-9./-]+:v?\d+\.\d+\.\d+$/, `${name}: image ${service.image}`);
    }
  });

  test('every file or folder the stack mounts exists in the repository', () => {
    const named = new Set(Object.keys(compose.volumes ?? {}));
    let binds = 0;
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.') || source.startsWith('/')) {
          assert.ok(!source.startsWith('/'), `${name}: ${source} is a path of one machine`);
          assert.ok(existsSync(repoPath(source)), `${name} mounts ${source}, which is not in the repository`);
          binds += 1;
        } else {
          assert.ok(named.has(source), `${name}: volume ${source} is not declared`);
        }
      }
    }
    assert.ok(binds >= 5, `${binds} bind mounts`);
  });

  test('ports are published on loopback only and match what the other services expect', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const spec of service.ports ?? []) {
        assert.equal(parsePort(spec).ip, '127.0.0.1', `${name} publishes ${spec} beyond this machine`);
      }
    }
    const gatewayPort = services.gateway?.environment?.PORT;
    assert.ok(gatewayPort);
    assert.deepEqual(
      (services.gateway?.ports ?? []).map((spec) => parsePort(spec).container),
      [gatewayPort],
    );
    // Prometheus scrapes the gateway by its service name and port, and the Host check lets it in.
    const scrape = readRepoYaml<{ scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> }>(
      'deploy',
      'prometheus',
      'prometheus.yml',
    );
    const targets = scrape.scrape_configs.flatMap((job) =>
      job.static_configs.flatMap((config) => config.targets),
    );
    assert.ok(targets.includes(`gateway:${gatewayPort}`), String(targets));
    assert.ok(services.gateway?.environment?.ALLOWED_HOSTS?.split(',').includes('gateway'));
    // Grafana reads Prometheus where Prometheus listens.
    const prometheusPort = (services.prometheus?.command ?? [])
      .find((arg) => arg.startsWith('--web.listen-address='))
      ?.split(':')
      .at(-1);
    const datasources = readRepoYaml<{ datasources: Array<{ url: string }> }>(
      'deploy',
      'grafana',
      'provisioning',
      'datasources',
      'prometheus.yml',
    );
    assert.equal(datasources.datasources[0]?.url, `http://prometheus:${prometheusPort}`);
    // Dagu listens where the gateway and init look for it.
    const daguUrl = `http://dagu:${services.dagu?.environment?.DAGU_PORT}`;
    assert.equal(services.gateway?.environment?.DAGU_URL, daguUrl);
    assert.equal(services.init?.environment?.DAGU_URL, daguUrl);
  });

  test('every environment name given to the gateway is one the gateway reads', () => {
    const reads = namesTheGatewayReads();
    assert.ok(reads.has('DAGU_URL') && reads.has('AUTH_API_KEYS_FILE'), 'the observed list is real');
    const gateway = services.gateway!;
    const given = Object.keys(gateway.environment ?? {});
    // The command adds DAGU_API_TOKEN from the file init wrote.
    const fromCommand = [...(gateway.command ?? []).join(' ').matchAll(/\b([A-Z][A-Z0-9_]*)=/g)].map(
      (m) => m[1]!,
    );
    assert.deepEqual(fromCommand, ['DAGU_API_TOKEN']);
    const unknown = [...given, ...fromCommand].filter((name) => !reads.has(name));
    assert.deepEqual(unknown, [], 'names the gateway never reads');
    // The configuration the stack gives the gateway is valid.
    assert.doesNotThrow(() => loadConfig({ ...gateway.environment, DAGU_API_TOKEN: 'dagu_example' }));
  });

  test('the gateway reads the files init writes, from the volume they share', () => {
    const secretsDir = services.init?.environment?.SECRETS_DIR;
    assert.ok(secretsDir);
    const mounted = (service: Service) =>
      (service.volumes ?? []).find((volume) => volume.split(':')[1] === secretsDir)?.split(':');
    assert.equal(mounted(services.init!)?.[0], 'gateway-secrets');
    assert.deepEqual(mounted(services.gateway!), ['gateway-secrets', secretsDir, 'ro']);
    assert.equal(services.gateway?.environment?.AUTH_API_KEYS_FILE, `${secretsDir}/keys.yaml`);
    assert.match(services.gateway?.command?.join(' ') ?? '', new RegExp(`cat ${secretsDir}/dagu-api-token`));
    assert.deepEqual(services.gateway?.depends_on, {
      init: { condition: 'service_completed_successfully' },
      jaeger: { condition: 'service_started' },
    });
    const init = readRepoFile('deploy', 'compose', 'init.mjs');
    for (const file of ['keys.yaml', 'dagu-api-token']) assert.ok(init.includes(`'${file}'`), file);
  });

  test('Jaeger: the release the tests run, memory storage, its UI on loopback, the gateway tracing into it', () => {
    const jaeger = services.jaeger!;
    // Jaeger tags each release twice, v1.N.0 and v2.(N-63).0: the image of v2 2.12.0 is the cmd/jaeger
    // that scripts/deploy-tools.sh builds as v1.75.0 for the tests.
    const built = /^JAEGER_VERSION=v1\.(\d+)\.0$/m.exec(readRepoFile('scripts', 'deploy-tools.sh'));
    assert.ok(built, 'JAEGER_VERSION in scripts/deploy-tools.sh');
    assert.equal(jaeger.image, `jaegertracing/jaeger:2.${Number(built[1]) - 63}.0`);
    // Its configuration is the repository's file, with OTLP/HTTP in and memory storage.
    const mount = (jaeger.volumes ?? []).map((volume) => volume.split(':'));
    assert.deepEqual(mount, [['./deploy/jaeger/jaeger.yaml', '/etc/jaeger/jaeger.yaml', 'ro']]);
    assert.deepEqual(jaeger.command, ['--config', '/etc/jaeger/jaeger.yaml']);
    const config = readRepoYaml<JaegerConfig>('deploy', 'jaeger', 'jaeger.yaml');
    assert.deepEqual(config.service.pipelines.traces.receivers, ['otlp']);
    assert.deepEqual(Object.keys(config.receivers.otlp.protocols), ['http']);
    const storage = config.extensions.jaeger_storage.backends;
    assert.deepEqual(
      Object.values(storage).map((backend) => Object.keys(backend)),
      [['memory']],
    );
    assert.equal(config.extensions.jaeger_query.storage.traces, Object.keys(storage)[0]);
    const port = (endpoint: string) => /:(\d+)\}?$/.exec(endpoint)?.[1];
    const otlpPort = port(config.receivers.otlp.protocols.http.endpoint);
    const queryPort = port(config.extensions.jaeger_query.http.endpoint);
    // The UI is published, on loopback (checked for every port above), and so is OTLP/HTTP.
    assert.deepEqual(
      (jaeger.ports ?? []).map((spec) => [parsePort(spec).host, parsePort(spec).container]),
      [
        [queryPort, queryPort],
        [otlpPort, otlpPort],
      ],
    );
    // The gateway sends its spans there, and the configuration it is given turns tracing on.
    const environment = services.gateway?.environment ?? {};
    assert.equal(environment.OTEL_EXPORTER_OTLP_ENDPOINT, `http://jaeger:${otlpPort}`);
    const tracing = loadConfig({ ...environment, DAGU_API_TOKEN: 'dagu_example' }).tracing;
    assert.equal(tracing?.endpoint, `http://jaeger:${otlpPort}/v1/traces`);
    assert.equal(tracing?.serviceName, 'dagu-mcp-gateway');
    // Prometheus keeps the exemplars that link the latency panels to the traces.
    assert.ok(services.prometheus?.command?.includes('--enable-feature=exemplar-storage'));
    assert.ok((services.grafana?.depends_on as string[] | undefined)?.includes('jaeger'));
  });

  test('.env.example documents every variable the compose file takes from .env', () => {
    const text = readRepoFile('docker-compose.yml');
    const example = readRepoFile('.env.example');
    const variables = new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
    assert.ok(variables.has('DAGU_ADMIN_PASSWORD'));
    for (const name of variables) {
      assert.match(example, new RegExp(`^#? ?${name}=`, 'm'), `${name} is not in .env.example`);
    }
  });

  const dockerCompose = deployTool('docker-compose');
  const skip = skipUnlessCI(dockerCompose.reason);
  const configEnv = (extra: Record<string, string>) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
    return env;
  };
  // docker-compose reads `.env` beside the compose file, and the README's deploy step creates exactly
  // that file in a clone: every run gets an empty env file of its own instead, so what a user keeps in
  // the working tree never decides a test.
  let emptyEnvFile: string | undefined;
  const isolated = (args: readonly string[]) => {
    emptyEnvFile ??= join(mkdtempSync(join(tmpdir(), 'compose-env-')), 'empty.env');
    writeFileSync(emptyEnvFile, '');
    return ['--env-file', emptyEnvFile, ...args];
  };
  after(() => {
    if (emptyEnvFile !== undefined) rmSync(dirname(emptyEnvFile), { recursive: true, force: true });
  });

  test('docker-compose config validates the file', { skip }, () => {
    const result = run(
      dockerCompose.path!,
      isolated([
        '--project-directory',
        repoPath(),
        '-f',
        repoPath('docker-compose.yml'),
        'config',
        '--quiet',
      ]),
      {
        env: configEnv({ DAGU_ADMIN_PASSWORD: 'correct horse battery' }),
      },
    );
    assert.equal(result.status, 0, result.stderr);
    const services = run(
      dockerCompose.path!,
      isolated(['-f', repoPath('docker-compose.yml'), 'config', '--services']),
      {
        env: configEnv({ DAGU_ADMIN_PASSWORD: 'correct horse battery' }),
      },
    );
    assert.deepEqual(services.stdout.trim().split('\n').sort(), [
      'dagu',
      'gateway',
      'grafana',
      'init',
      'jaeger',
      'prometheus',
    ]);
  });

  test('docker-compose config refuses to start without the Dagu admin password, saying where to set it', {
    skip,
  }, () => {
    const result = run(
      dockerCompose.path!,
      isolated(['-f', repoPath('docker-compose.yml'), 'config', '--quiet']),
      {
        env: configEnv({}),
      },
    );
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /set DAGU_ADMIN_PASSWORD in \.env/);
  });

  test("a user's .env beside the compose file (the README's deploy step) does not reach these checks", {
    skip,
  }, () => {
    // A project folder of its own holding the compose file and the `.env` the README tells users to
    // write: docker-compose alone reads it, the isolated invocation the tests use does not.
    const folder = mkdtempSync(join(tmpdir(), 'compose-user-env-'));
    try {
      writeFileSync(join(folder, 'docker-compose.yml'), readRepoFile('docker-compose.yml'));
      writeFileSync(join(folder, '.env'), 'DAGU_ADMIN_PASSWORD=set-by-the-user\n');
      const file = join(folder, 'docker-compose.yml');
      const plain = run(dockerCompose.path!, ['-f', file, 'config', '--quiet'], { env: configEnv({}) });
      assert.equal(plain.status, 0, `the .env is read without --env-file: ${plain.stderr}`);
      const result = run(dockerCompose.path!, isolated(['-f', file, 'config', '--quiet']), {
        env: configEnv({}),
      });
      assert.notEqual(result.status, 0);
      assert.match(result.stderr, /set DAGU_ADMIN_PASSWORD in \.env/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('Dockerfile', () => {
  const lines = readRepoFile('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const stages: string[][] = [];
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  const args = Object.fromEntries(
    lines.flatMap((line) => {
      const match = /^ARG\s+([A-Z_]+)=(\S+)/.exec(line);
      return match ? [[match[1]!, match[2]!]] : [];
    }),
  );
  const image = (from: string) =>
    from.split(/\s+/)[1]!.replace(/^\$\{?([A-Z_]+)\}?$/, (_all, name: string) => args[name] ?? '');

  test('every stage starts from one pinned Node release', () => {
    assert.ok(stages.length >= 2);
    for (const stage of stages) assert.match(image(stage[0]!), /^node:\d+\.\d+\.\d+-[a-z]+-slim$/);
  });

  test('the runtime stage runs the compiled build as an unprivileged user, with no package manager', () => {
    const runtime = stages.at(-1)!;
    assert.ok(runtime.includes('USER node'));
    assert.ok(
      runtime.some((line) => /^ENV\s.*\bMALLOC_ARENA_MAX=2\b/.test(line)),
      'glibc malloc arenas capped at 2',
    );
    assert.match(
      runtime.find((line) => line.startsWith('CMD'))!,
      /^CMD \["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist\/main\.js"\]$/,
    );
    assert.ok(
      !runtime.some((line) => /tsx|--import|npm (ci|install|run)/.test(line)),
      'no TypeScript loader or npm step',
    );
    const removal = runtime.find((line) => line.startsWith('RUN rm -rf'));
    for (const tool of ['/usr/local/bin/npm', '/usr/local/bin/npx', '/usr/local/bin/corepack']) {
      assert.ok(removal?.includes(tool), `${tool} is removed from the runtime image`);
    }
    // What it copies comes from the build stage: production node_modules (pruned there) and dist.
    const copies = runtime.filter((line) => line.startsWith('COPY'));
    assert.ok(
      copies.every((line) => line.startsWith('COPY --from=build ')),
      String(copies),
    );
    assert.ok(stages[0]!.some((line) => /npm prune --omit=dev/.test(line)));
    // It runs what the package's bin runs.
    const pkg = JSON.parse(readRepoFile('package.json')) as { bin: Record<string, string> };
    assert.ok(runtime.some((line) => line.includes(`"${pkg.bin['dagu-mcp-gateway']}"`)));
  });

  test('the production dependencies it keeps carry no TypeScript loader, compiler or linter', () => {
    const listed = run('npm', ['ls', '--omit=dev', '--all', '--parseable']);
    const packages = listed.stdout
      .split('\n')
      .filter((line) => line.includes('node_modules'))
      .map((line) => line.slice(line.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(
      packages.includes('fastify') && packages.includes('prom-client'),
      `${packages.length} packages`,
    );
    const tooling = packages.filter((name) =>
      /^(tsx|typescript|esbuild|@esbuild\/.*|@biomejs\/.*|@types\/.*|@modelcontextprotocol\/(client|sdk))$/.test(
        name,
      ),
    );
    assert.deepEqual(tooling, []);
  });

  test('every file the build copies from the context exists and is not left out by .dockerignore', () => {
    const ignored = picomatch(
      readRepoFile('.dockerignore')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
        .flatMap((pattern) => [pattern, `${pattern}/**`]),
      { dot: true },
    );
    const sources = lines
      .filter((line) => line.startsWith('COPY ') && !line.includes('--from='))
      .flatMap((line) => line.split(/\s+/).slice(1, -1));
    assert.ok(sources.length > 0);
    for (const source of sources) {
      if (source === '.') {
        // The whole context: what the build reads must survive .dockerignore.
        for (const needed of ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) {
          assert.ok(!ignored(needed), `${needed} is left out of the build context`);
        }
        for (const entry of readdirSync(repoPath('src'))) {
          if (statSync(repoPath('src', entry)).isFile()) assert.ok(!ignored(`src/${entry}`), `src/${entry}`);
        }
        continue;
      }
      assert.ok(existsSync(repoPath(source)), `COPY ${source}: not in the repository`);
      assert.ok(!ignored(source), `COPY ${source}: left out by .dockerignore`);
    }
    for (const secret of ['.env', 'keys.yaml', 'node_modules', '.git'])
      assert.ok(ignored(secret), `${secret} is not ignored`);
  });
});
