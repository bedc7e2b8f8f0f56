// OAUTH_CLIENTS_FILE: the administrator's pre-registered clients, checked as oidc-provider would check
// them, and reloaded when the file changes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigFileError } from '../../../src/auth/watched-file.ts';
import { parseClientFile, watchClientFile } from '../../../src/oauth/client-file.ts';
import { tempDir } from '../../support/temp.ts';

const problemsOf = (text: string): string[] => {
  try {
    parseClientFile(text, 'clients.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigFileError);
    return error.problems;
  }
  assert.fail('the file was accepted');
};

describe('clients file', () => {
  test('a public client (no secret) authenticates with none, a confidential one with HTTP Basic; both code and refresh', () => {
    const clients = parseClientFile(
      [
        'clients:',
        '  - client_id: team-agent',
        '    client_name: Team agent',
        '    redirect_uris: [https://agent.example.com/cb, http://127.0.0.1:8123/cb]',
        '  - client_id: ci-runner',
        `    client_secret: ${'s'.repeat(32)}`,
        '    redirect_uris: [https://ci.example.com/cb]',
        '  - client_id: desktop',
        '    application_type: native',
        '    redirect_uris: ["cursor://anysphere/callback", "http://[::1]/cb"]',
      ].join('\n'),
      'clients.yaml',
    );
    assert.deepEqual([...clients.keys()], ['team-agent', 'ci-runner', 'desktop']);
    assert.equal(clients.get('team-agent')?.token_endpoint_auth_method, 'none');
    assert.equal(clients.get('team-agent')?.client_name, 'Team agent');
    assert.equal(clients.get('ci-runner')?.token_endpoint_auth_method, 'client_secret_basic');
    assert.deepEqual(clients.get('desktop')?.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(clients.get('desktop')?.response_types, ['code']);
  });

  test('JSON as well as YAML', () => {
    const text = JSON.stringify({ clients: [{ client_id: 'a', redirect_uris: ['https://a.example/cb'] }] });
    assert.equal(parseClientFile(text, 'clients.json').size, 1);
  });

  test('an https client id is refused: it is a metadata document’s', () => {
    const problems = problemsOf(
      'clients:\n  - { client_id: "https://host.example/client.json", redirect_uris: [https://a.example/cb] }\n',
    );
    assert.deepEqual(problems, ['clients.0.client_id: must match pattern "^[A-Za-z0-9._~-]{1,128}$"']);
  });

  test('a client id listed twice is refused', () => {
    const problems = problemsOf(
      [
        'clients:',
        '  - { client_id: twice, redirect_uris: [https://a.example/cb] }',
        '  - { client_id: twice, redirect_uris: [https://b.example/cb] }',
      ].join('\n'),
    );
    assert.deepEqual(problems, ['clients.1.client_id: twice is listed twice']);
  });

  test('redirect URIs oidc-provider would refuse are named with their place in the file', () => {
    const problems = problemsOf(
      [
        'clients:',
        '  - client_id: web',
        '    redirect_uris: [http://agent.example.com/cb, https://a.example/cb#x, not a url, cursor://x/cb]',
        '  - client_id: native',
        '    application_type: native',
        '    redirect_uris: [https://127.0.0.1/cb, javascript://x]',
      ].join('\n'),
    );
    assert.deepEqual(problems, [
      'clients.0.redirect_uris.0: http only on a loopback address',
      'clients.0.redirect_uris.1: must not carry a fragment',
      'clients.0.redirect_uris.2: is not an absolute URL',
      'clients.0.redirect_uris.3: a web client redirects to https (or http on loopback)',
      'clients.1.redirect_uris.0: https on loopback is not a native redirect',
      'clients.1.redirect_uris.1: the javascript: scheme is not allowed',
    ]);
  });

  test('a short secret, an unknown field and no redirect URI are refused; the secret is never quoted', () => {
    const secret = 'short-secret-value';
    const problems = problemsOf(
      [
        'clients:',
        `  - { client_id: a, client_secret: ${secret}, redirect_uris: [https://a.example/cb] }`,
        '  - { client_id: b, redirect_uris: [], scope: dagu.workbook }',
      ].join('\n'),
    );
    assert.ok(
      problems.includes('clients.0.client_secret: must NOT have fewer than 32 characters'),
      problems.join('\n'),
    );
    assert.ok(
      problems.includes('clients.1.redirect_uris: must NOT have fewer than 1 items'),
      problems.join('\n'),
    );
    assert.ok(problems.includes('clients.1: must NOT have additional properties'), problems.join('\n'));
    assert.ok(!problems.join('\n').includes(secret));
  });

  test('a change of the file is read again; a broken edit keeps the clients loaded before', () => {
    const file = join(tempDir('oauth-clients-'), 'clients.yaml');
    writeFileSync(file, 'clients:\n  - { client_id: a, redirect_uris: [https://a.example/cb] }\n');
    const watched = watchClientFile(file, { watch: false, signals: false });
    try {
      assert.deepEqual([...watched.current().keys()], ['a']);
      writeFileSync(file, 'clients:\n  - { client_id: b, redirect_uris: [https://b.example/cb] }\n');
      assert.equal(watched.reload(), true);
      assert.deepEqual([...watched.current().keys()], ['b']);
      writeFileSync(file, 'clients:\n  - { client_id: c, redirect_uris: [http://c.example/cb] }\n');
      assert.equal(watched.reload(), false);
      assert.deepEqual([...watched.current().keys()], ['b']);
    } finally {
      watched.close();
    }
  });
});
