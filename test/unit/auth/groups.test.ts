import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createAuthenticator } from '../../../src/auth/authenticate.ts';
import { applyGroups, parseGroups } from '../../../src/auth/groups.ts';
import { accessPolicyFor, type Identity } from '../../../src/auth/identity.ts';
import { nowSeconds, recordingLog, signJwt, tempDir, writeTemp } from '../../support/auth-helpers.ts';

const POLICY = `groups:
  data-eng: { role: operator, dags: ["etl-*"], workspaces: ["ops"] }
  reporting: { dags: ["report-*"] }
  auditors: {}
`;

const caller = (groups?: string[]): Identity => ({
  kind: 'jwt',
  id: 'u1',
  name: 'u1',
  role: 'viewer',
  dags: ['from-claims'],
  ...(groups ? { groups } : {}),
});

describe('groups file', () => {
  it('maps groups to the union of their allowlists and the highest role', () => {
    const policy = parseGroups(POLICY, 'groups.yaml');
    const both = applyGroups(caller(['data-eng', 'reporting', 'unknown']), policy);
    assert.equal(both.role, 'operator');
    assert.deepEqual(both.dags, ['etl-*', 'report-*']);
    // `reporting` names no workspaces: every workspace.
    assert.equal(both.workspaces, undefined);
    const access = accessPolicyFor(both);
    assert.deepEqual(
      [access.canReadDag('etl-a'), access.canReadDag('report-b'), access.canReadDag('x')],
      [true, true, false],
    );
    const auditor = applyGroups(caller(['auditors']), policy);
    assert.deepEqual([auditor.dags, auditor.workspaces, auditor.role], [undefined, undefined, 'viewer']);
  });

  it('a token naming no group of the file reads nothing (its own allowlist claims are not used)', () => {
    const none = applyGroups(caller(['other']), parseGroups(POLICY, 'groups.yaml'));
    assert.deepEqual([none.dags, none.workspaces], [[], []]);
    assert.equal(
      accessPolicyFor(applyGroups(caller(), parseGroups(POLICY, 'g.yaml'))).canReadDag('etl-a'),
      false,
    );
  });

  it('refuses a malformed file naming the place, never its text', () => {
    assert.throws(
      () => parseGroups('groups:\n  a: { role: root }\n', 'g.yaml'),
      /groups\.a\.role: must be equal to one of/,
    );
    assert.throws(() => parseGroups('groups: { a: { dags: [] } }', 'g.yaml'), /groups\.a\.dags/);
  });

  it('is read through the authenticator from the groups claim, and reloaded when the file changes', async () => {
    const secret = 'groups-test-secret-0123456789abcdef0123';
    const file = writeTemp(tempDir(), 'groups.yaml', POLICY);
    const log = recordingLog();
    const authenticator = await createAuthenticator(
      {
        host: '127.0.0.1',
        auth: {
          apiKeysFile: undefined,
          jwtSecret: secret,
          jwtPublicKey: undefined,
          jwksUrl: undefined,
          jwtIssuer: undefined,
          jwtAudience: undefined,
          allowAnonymous: false,
          groupsFile: file,
          claims: { identity: 'email', role: 'role', groups: 'roles' },
        },
      },
      log,
      { keys: { watch: false } },
    );
    try {
      const token = signJwt(
        { sub: 's', email: 'ann@example.com', roles: ['reporting'], exp: nowSeconds() + 60 },
        { alg: 'HS256', key: secret },
      );
      const before = await authenticator.authenticate(`Bearer ${token}`);
      assert.ok(before.ok);
      assert.equal(before.identity.id, 'ann@example.com');
      assert.deepEqual(before.identity.dags, ['report-*']);
      writeFileSync(
        file,
        POLICY.replace('reporting: { dags: ["report-*"] }', 'reporting: { dags: ["weekly"] }'),
      );
      process.emit('SIGHUP', 'SIGHUP');
      const after = await authenticator.authenticate(`Bearer ${token}`);
      assert.ok(after.ok);
      assert.deepEqual(after.identity.dags, ['weekly']);
      assert.match(log.text(), /group grants reloaded/);
    } finally {
      await authenticator.close();
    }
  });
});
