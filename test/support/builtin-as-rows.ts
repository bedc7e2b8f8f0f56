/**
 * The TypeScript SDK client's rows against the gateway's built-in authorization server (issue 29), for
 * any upstream provider: first connect → read; refresh; step-up to `dagu.workbook`; a token for another
 * resource refused; a revoked refresh token refused. One describe per registration (dynamic, or a Client
 * ID Metadata Document), its tests sharing one signed-in session in order. The world (gateway, upstream,
 * user) is read when the describe starts: the test file sets it up in its own `before`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OAuthError, refreshAuthorization } from '@modelcontextprotocol/client';
import {
  BrowserAgent,
  builtinServerEnv,
  decodeJwt,
  type GatewayOAuthProvider,
  newGatewayProvider,
  readWorkbookAfterStepUp,
  serverMetadata,
  tokenRequest,
  type UpstreamClient,
} from './builtin-as.ts';
import type { TestDagu } from './dagu.ts';
import {
  connectWithOAuth,
  type OAuthConnection,
  type PageAnswerer,
  readDags,
  type UserCredentials,
} from './oauth-clients.ts';

/** A resource the gateway does not serve: a token for it must be refused. */
const OTHER_RESOURCE = 'https://other.example/mcp';

export interface BuiltinWorld {
  /** The gateway's PUBLIC_URL; its MCP endpoint (the tokens' audience) is `<publicUrl>/mcp`. */
  publicUrl: string;
  /** Where the upstream provider's pages live (its origin). */
  upstreamOrigin: string;
  /** The user at the upstream provider, and how its sign-in pages are filled. */
  user: UserCredentials;
  upstreamPages?: (user: UserCredentials) => PageAnswerer;
  /** The gateway's identity of the user (its tokens' `sub`) and the email the upstream gives. */
  identity: string;
  email: string;
  /** The groups the upstream gives the user, as the gateway's token should carry them (when checked). */
  groups?: string[];
  /** A DAG the `dags` read lists, and a workbook the step-up reads. */
  seededDag: string;
  workbookPath: string;
  auditLines(): Array<Record<string, unknown>>;
}

export interface RowSession {
  agent: BrowserAgent;
  provider: GatewayOAuthProvider;
  connection: OAuthConnection;
}

export interface BuiltinGatewayOptions {
  port: number;
  dagu: TestDagu;
  /** The operator's one client at the upstream provider. */
  upstream: UpstreamClient;
  /** The CA of the https server the Client ID Metadata Documents come from. */
  caFile: string;
  /** Holds the workbooks (WORKBOOK_ROOTS) and the server's state folder. */
  workbookDir: string;
}

/** The environment of a gateway on 127.0.0.1:`port` with its built-in server federating upstream. */
export function builtinGatewayEnv(
  options: BuiltinGatewayOptions,
  extra: Record<string, string> = {},
): Record<string, string> {
  const { port, dagu, upstream } = options;
  return {
    PORT: String(port),
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...builtinServerEnv(upstream),
    OAUTH_CLIENT_ID_CA_FILE: options.caFile,
    WORKBOOK_ROOTS: options.workbookDir,
    OAUTH_STATE_DIR: join(options.workbookDir, `oauth-state-${port}`),
    ...extra,
  };
}

export type Registration = { kind: 'dynamic' } | { kind: 'metadata document'; url: () => string };

/**
 * The five rows for one registration, as a describe titled `title`; `more` adds tests to it that use
 * the signed-in session (they run after the rows, with the refresh token revoked).
 */
export function builtinClientRows(
  title: string,
  world: () => BuiltinWorld,
  registration: Registration,
  more?: (session: () => RowSession) => void,
): void {
  describe(title, () => {
    let w: BuiltinWorld;
    let session: RowSession;
    const resource = () => `${w.publicUrl}/mcp`;
    const auditOf = (event: string) => w.auditLines().filter((line) => line.event === event);

    before(async () => {
      w = world();
      const agent = new BrowserAgent(w.user, w.publicUrl, 'allow', w.upstreamPages);
      const provider = newGatewayProvider(
        agent,
        w.user,
        w.upstreamOrigin,
        registration.kind === 'metadata document' ? { clientMetadataUrl: registration.url() } : {},
      );
      session = { agent, provider, connection: await connectWithOAuth(resource(), provider) };
    });
    after(async () => {
      await session?.connection.close().catch(() => {});
    });

    test('first connect → read: the consent page once before the upstream sign-in, a token for this gateway only, the read', async () => {
      const { provider, connection, agent } = session;
      assert.ok((await readDags(connection.client)).includes(w.seededDag));
      assert.equal(agent.consentPages, 1);
      const claims = decodeJwt(provider.tokens()!.access_token);
      assert.equal(claims.iss, w.publicUrl);
      assert.equal(claims.aud, resource());
      assert.equal(claims.sub, w.identity);
      assert.equal(claims.scope, 'dagu.read');
      assert.equal(claims.email, w.email);
      if (w.groups !== undefined) assert.deepEqual(claims.groups, w.groups);
      const consentAt = agent.steps.findIndex(
        (step) => step.method === 'POST' && step.url.includes('/consent'),
      );
      const upstreamAt = agent.steps.findIndex((step) => step.url.startsWith(w.upstreamOrigin));
      assert.ok(consentAt >= 0 && consentAt < upstreamAt, JSON.stringify(agent.steps));
      const clientId = provider.client!.client_id;
      const registered = auditOf('oauth.registration').some((line) => line.client_id === clientId);
      if (registration.kind === 'dynamic') assert.equal(registered, true);
      else {
        // The document's URL is the client id: nothing was registered.
        assert.equal(clientId, registration.url());
        assert.equal(registered, false);
      }
      assert.equal(
        auditOf('oauth.consent').some((line) => line.client_id === clientId && line.outcome === 'ok'),
        true,
      );
      assert.equal(
        auditOf('oauth.grant').some((line) => line.client_id === clientId && line.identity === w.identity),
        true,
      );
    });

    test('refresh: a new access token and a new refresh token; the old refresh token is then refused', async () => {
      const { provider } = session;
      const earlier = provider.tokens()!;
      assert.ok(earlier.refresh_token, 'a refresh token was issued');
      const refreshed = await refreshAuthorization(w.publicUrl, {
        metadata: await serverMetadata(w.publicUrl),
        clientInformation: provider.client!,
        refreshToken: earlier.refresh_token,
        resource: new URL(resource()),
      });
      assert.notEqual(refreshed.refresh_token, earlier.refresh_token);
      assert.notEqual(refreshed.access_token, earlier.access_token);
      assert.equal(decodeJwt(refreshed.access_token).aud, resource());
      provider.saveTokens(refreshed);
      const reused = await tokenRequest(w.publicUrl, {
        grant_type: 'refresh_token',
        refresh_token: earlier.refresh_token,
        client_id: provider.client!.client_id,
      });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error, 'invalid_grant');
    });

    test('step-up: a workbook read with dagu.read gets 403, the SDK re-authorizes with dagu.workbook without a second consent page, reads', async () => {
      const { provider, connection, agent } = session;
      const result = await readWorkbookAfterStepUp(connection, provider, w.workbookPath);
      assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      assert.ok((result.structuredContent?.data?.sheets ?? []).length > 0);
      assert.deepEqual(decodeJwt(provider.tokens()!.access_token).scope?.split(' ').sort(), [
        'dagu.read',
        'dagu.workbook',
      ]);
      assert.equal(agent.consentPages, 1, 'the consent is remembered for this client and user');
    });

    test('a token for another resource is refused at the token endpoint (invalid_target)', async () => {
      const { provider } = session;
      const answer = await tokenRequest(w.publicUrl, {
        grant_type: 'refresh_token',
        refresh_token: provider.tokens()!.refresh_token!,
        client_id: provider.client!.client_id,
        resource: OTHER_RESOURCE,
      });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error, 'invalid_target');
    });

    test('a revoked refresh token is refused, and the revocation is audited', async () => {
      const { provider } = session;
      const refreshToken = provider.tokens()!.refresh_token!;
      const revoked = await fetch(`${w.publicUrl}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshToken, client_id: provider.client!.client_id }).toString(),
      });
      assert.equal(revoked.status, 200);
      await assert.rejects(
        refreshAuthorization(w.publicUrl, {
          metadata: await serverMetadata(w.publicUrl),
          clientInformation: provider.client!,
          refreshToken,
          resource: new URL(resource()),
        }),
        (error: unknown) => error instanceof OAuthError && error.code === 'invalid_grant',
      );
      assert.equal(
        auditOf('oauth.revocation').some((line) => line.client_id === provider.client!.client_id),
        true,
      );
    });

    more?.(() => session);
  });
}
