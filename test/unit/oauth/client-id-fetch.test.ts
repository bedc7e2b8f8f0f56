// The Client ID Metadata Document fetch (src/oauth/client-id-fetch.ts): what it refuses before any
// connection (plain http, hosts off the allowlist, address literals in refused ranges). The address
// ranges themselves are covered by address-check.test.ts; the fetch over https on loopback, the
// redirect, size and mismatch refusals by test/integration/oauth/provider.e2e.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClientIdFetchRefused, createClientIdFetch } from '../../../src/oauth/client-id-fetch.ts';

const refused = (message: RegExp) => (error: unknown) =>
  error instanceof ClientIdFetchRefused && message.test(error.message);

describe('createClientIdFetch', () => {
  test('refuses a plain http URL', async () => {
    const guarded = createClientIdFetch({
      hosts: undefined,
      allowLoopback: true,
      timeoutMs: 1000,
      maxBytes: 4096,
    });
    await assert.rejects(guarded.fetch('http://127.0.0.1:9/client.json', {}), refused(/must use https/));
    await guarded.close();
  });

  test('refuses a host off the allowlist', async () => {
    const guarded = createClientIdFetch({
      hosts: ['clients.example'],
      allowLoopback: false,
      timeoutMs: 1000,
      maxBytes: 4096,
    });
    await assert.rejects(
      guarded.fetch('https://other.example/client.json', {}),
      refused(/other\.example is not in OAUTH_CLIENT_ID_HOSTS/),
    );
    await guarded.close();
  });

  test('refuses address literals in refused ranges, IPv4 and IPv6, before connecting', async () => {
    const guarded = createClientIdFetch({
      hosts: undefined,
      allowLoopback: false,
      timeoutMs: 1000,
      maxBytes: 4096,
    });
    await assert.rejects(guarded.fetch('https://127.0.0.1:9/c.json', {}), refused(/loopback/));
    await assert.rejects(guarded.fetch('https://[::1]:9/c.json', {}), refused(/loopback/));
    await assert.rejects(guarded.fetch('https://169.254.169.254/c.json', {}), refused(/link-local/));
    await assert.rejects(guarded.fetch('https://[fd00::1]/c.json', {}), refused(/private/));
    await guarded.close();
  });
});
