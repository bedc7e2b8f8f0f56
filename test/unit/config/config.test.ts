import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, isLoopbackHost, loadConfig } from '../../../src/config.ts';

test('defaults follow design §4', () => {
  const config = loadConfig({});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8090);
  assert.equal(config.mcpPath, '/mcp');
  assert.deepEqual(config.dagu, {
    url: 'http://127.0.0.1:8080',
    apiBase: '/api/v1',
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

test('loopback detection', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
    assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.com'])
    assert.equal(isLoopbackHost(host), false, host);
});
