import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, isLoopbackHost, loadConfig } from '../../src/config.ts';
import { SETTINGS } from '../../src/settings.ts';

test('defaults follow design §4', () => {
  const config = loadConfig({});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8090);
  assert.equal(config.mcpPath, '/mcp');
  assert.deepEqual(config.dagu, {
    url: 'http://127.0.0.1:8080',
    apiBase: 'auto',
    token: undefined,
    timeoutMs: 10_000,
  });
  assert.deepEqual(config.readiness, { probeTimeoutMs: 750, probeIntervalMs: 5_000 });
  assert.equal(config.auditLog, 'stdout');
  assert.equal(config.auth.allowAnonymous, false);
  assert.deepEqual(config.allowedOrigins, []);
  assert.equal(config.workbook.roots, undefined);
  assert.equal(config.limits.bodyLimitBytes, 65_536);
});

test('values are coerced, trimmed and split', () => {
  const config = loadConfig({
    PORT: ' 9000 ',
    DAGU_URL: 'http://dagu:8080/base/',
    AUTH_ALLOW_ANONYMOUS: 'true',
    ALLOWED_ORIGINS: 'https://a.example, https://b.example',
    WORKBOOK_ROOTS: '/srv/a::/srv/b',
  });
  assert.equal(config.port, 9000);
  assert.equal(config.dagu.url, 'http://dagu:8080/base');
  assert.equal(config.auth.allowAnonymous, true);
  assert.deepEqual(config.allowedOrigins, ['https://a.example', 'https://b.example']);
  assert.deepEqual(config.workbook.roots, ['/srv/a', '/srv/b']);
});

test('loopback origins: on for a loopback bind without ALLOWED_ORIGINS, off otherwise', () => {
  assert.equal(loadConfig({}).loopbackOrigins, true);
  assert.equal(loadConfig({ HOST: 'localhost' }).loopbackOrigins, true);
  assert.equal(loadConfig({ HOST: '::1' }).loopbackOrigins, true);
  assert.equal(loadConfig({ ALLOWED_ORIGINS: 'https://app.example' }).loopbackOrigins, false);
  assert.equal(loadConfig({ HOST: '0.0.0.0', AUTH_ALLOW_ANONYMOUS: 'true' }).loopbackOrigins, false);
  assert.equal(loadConfig({ HOST: '10.0.0.5' }).loopbackOrigins, false);
});

test('invalid configuration fails with one clear line per problem and never echoes a secret', () => {
  assert.throws(
    () =>
      loadConfig({
        PORT: '70000',
        DAGU_URL: 'ftp://x',
        DAGU_TIMEOUT_MS: 'soon',
        AUTH_JWT_SECRET: 'short-secret',
        LOG_LEVEL: 'loud',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const lines = error.problems;
      assert.equal(lines.length, 5, lines.join('\n'));
      assert.ok(lines.some((line) => line.startsWith('PORT:') && line.includes('70000')));
      assert.ok(lines.some((line) => line.startsWith('DAGU_URL:')));
      assert.ok(lines.some((line) => line.startsWith('DAGU_TIMEOUT_MS:')));
      assert.ok(lines.some((line) => line.startsWith('LOG_LEVEL:')));
      const secretLine = lines.find((line) => line.startsWith('AUTH_JWT_SECRET:'));
      assert.ok(secretLine && !secretLine.includes('short-secret'), secretLine);
      return true;
    },
  );
});

test('at most one JWT verification mode', () => {
  assert.throws(
    () => loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), AUTH_JWKS_URL: 'https://idp.example/jwks' }),
    /AUTH_JWT_SECRET, AUTH_JWKS_URL: set at most one JWT verification mode/,
  );
});

test('AUTH_JWT_ISSUER alone must be one http(s) URL: its discovery document gives the JWKS URL', () => {
  assert.equal(
    loadConfig({ AUTH_JWT_ISSUER: 'https://idp.example/realms/dagu' }).auth.jwtIssuer,
    'https://idp.example/realms/dagu',
  );
  for (const issuer of ['dagu', 'https://a.example,https://b.example']) {
    assert.throws(
      () => loadConfig({ AUTH_JWT_ISSUER: issuer }),
      new RegExp(
        `AUTH_JWT_ISSUER: without AUTH_JWKS_URL, AUTH_JWT_PUBLIC_KEY or AUTH_JWT_SECRET it must be one http:// or https:// URL, the issuer whose discovery document names the JWKS \\(got "${issuer}"\\)`,
      ),
    );
  }
  // Beside a verification mode, any issuer names are accepted as before.
  assert.equal(
    loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), AUTH_JWT_ISSUER: 'dagu' }).auth.jwtIssuer,
    'dagu',
  );
});

test('loopback detection', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
    assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.com'])
    assert.equal(isLoopbackHost(host), false, host);
});

test('config errors say what is allowed in words, never as a regular expression', () => {
  const bad: Record<string, string> = {
    MCP_PATH: 'mcp',
    PUBLIC_URL: 'https://mcp.example.com/path',
    DAGU_URL: 'ftp://x',
    DAGU_API_BASE: '/api/v1/',
    AUTH_JWKS_URL: 'file:///jwks.json',
    RATE_LIMIT_REDIS_URL: 'http://user:hunter2@redis:6379',
    PORT: '-1',
    LOG_LEVEL: 'loud',
    AUTH_ALLOW_ANONYMOUS: 'maybe',
    TOOL_TEXT: 'markdown',
  };
  assert.throws(
    () => loadConfig(bad),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, Object.keys(bad).length, error.problems.join('\n'));
      for (const line of error.problems) {
        assert.match(line, /^[A-Z_]+: must be /, line);
        assert.doesNotMatch(line, /pattern|\^|\[\^|\$"|>=|<=|must match/, line);
      }
      const find = (key: string) => error.problems.find((line) => line.startsWith(`${key}:`)) ?? '';
      assert.match(
        find('DAGU_URL'),
        /an http:\/\/ or https:\/\/ URL without a query or fragment \(got "ftp:\/\/x"\)/,
      );
      assert.match(find('PORT'), /a whole number from 0 to 65535/);
      assert.match(find('TOOL_TEXT'), /one of contract, json/);
      assert.doesNotMatch(find('RATE_LIMIT_REDIS_URL'), /hunter2/, 'a Redis URL may hold a password');
      return true;
    },
  );
});

test('every setting has a flag named after it, a help line and words for what it allows', () => {
  for (const setting of SETTINGS) {
    assert.equal(setting.flag, `--${setting.name.toLowerCase().replaceAll('_', '-')}`);
    assert.ok(setting.help.length > 10, setting.name);
    assert.doesNotMatch(setting.allowed, /\^|\[\^|\$$/, setting.name);
  }
  assert.ok(SETTINGS.some((setting) => setting.name === 'DAGU_URL' && setting.flag === '--dagu-url'));
});

test('TOOL_TEXT defaults to the contract text; RATE_LIMIT_REDIS_URL is off by default', () => {
  assert.equal(loadConfig({}).toolText, 'contract');
  assert.equal(loadConfig({ TOOL_TEXT: 'json' }).toolText, 'json');
  assert.equal(loadConfig({}).rateLimitRedisUrl, undefined);
  assert.equal(
    loadConfig({ RATE_LIMIT_REDIS_URL: 'redis://r:6379/0' }).rateLimitRedisUrl,
    'redis://r:6379/0',
  );
});

test('DAGU_API_BASE: auto (the default) or a REST path; anything else is refused', () => {
  assert.equal(loadConfig({ DAGU_API_BASE: 'auto' }).dagu.apiBase, 'auto');
  assert.equal(loadConfig({ DAGU_API_BASE: '/api/v2' }).dagu.apiBase, '/api/v2');
  assert.equal(loadConfig({ DAGU_API_BASE: '/dagu/api/v1' }).dagu.apiBase, '/dagu/api/v1');
  for (const value of ['v2', 'automatic', '/api/v1/']) {
    assert.throws(() => loadConfig({ DAGU_API_BASE: value }), ConfigError, value);
  }
});

test('the workbook pool gives one caller half of the workers by default, never more than the pool', () => {
  const pool = (env: NodeJS.ProcessEnv) => {
    const { maxConcurrent, maxPerCaller, queueMax, queueWaitMs, maxSpinCount } = loadConfig(env).workbook;
    return { maxConcurrent, maxPerCaller, queueMax, queueWaitMs, maxSpinCount };
  };
  assert.deepEqual(pool({}), {
    maxConcurrent: 2,
    maxPerCaller: 1,
    queueMax: 32,
    queueWaitMs: 10_000,
    maxSpinCount: 1_000_000,
  });
  assert.equal(pool({ WORKBOOK_MAX_CONCURRENT: '1' }).maxPerCaller, 1);
  assert.equal(pool({ WORKBOOK_MAX_CONCURRENT: '7' }).maxPerCaller, 3);
  assert.equal(pool({ WORKBOOK_MAX_CONCURRENT: '4', WORKBOOK_MAX_PER_CALLER: '4' }).maxPerCaller, 4);
  assert.equal(pool({ WORKBOOK_MAX_CONCURRENT: '2', WORKBOOK_MAX_PER_CALLER: '9' }).maxPerCaller, 2);
  assert.throws(() => loadConfig({ WORKBOOK_MAX_SPIN_COUNT: '10000001' }), /WORKBOOK_MAX_SPIN_COUNT/);
});

test('TLS: both files or neither; a missing half is named', () => {
  assert.equal(loadConfig({}).tls, undefined);
  assert.deepEqual(loadConfig({ TLS_CERT_FILE: ' /etc/gw/tls.crt ', TLS_KEY_FILE: '/etc/gw/tls.key' }).tls, {
    certFile: '/etc/gw/tls.crt',
    keyFile: '/etc/gw/tls.key',
  });
  assert.throws(
    () => loadConfig({ TLS_CERT_FILE: '/etc/gw/tls.crt' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems, [
        'TLS_KEY_FILE: must be set too when TLS_CERT_FILE is set (HTTPS needs both files)',
      ]);
      return true;
    },
  );
  assert.throws(
    () => loadConfig({ TLS_KEY_FILE: '/etc/gw/tls.key' }),
    /TLS_CERT_FILE: must be set too when TLS_KEY_FILE is set/,
  );
});

test('TRUST_PROXY: off by default; addresses, CIDR ranges and named ranges; anything else is named', () => {
  assert.deepEqual(loadConfig({}).trustProxy, []);
  assert.deepEqual(
    loadConfig({ TRUST_PROXY: '10.0.0.7, 192.168.0.0/16,::1, fd00::/8, loopback' }).trustProxy,
    ['10.0.0.7', '192.168.0.0/16', '::1', 'fd00::/8', 'loopback'],
  );
  for (const bad of ['true', '*', '10.0.0.0/33', '::/129', 'proxy.example', '10.0.0.1/8/8', '1']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: `127.0.0.1,${bad}` }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 1, error.problems.join('\n'));
        assert.match(error.problems[0]!, /^TRUST_PROXY: must be IP addresses or CIDR ranges/);
        assert.ok(error.problems[0]!.includes(JSON.stringify(bad)), error.problems[0]);
        return true;
      },
    );
  }
});
