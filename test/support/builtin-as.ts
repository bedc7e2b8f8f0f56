/**
 * Drives the gateway's built-in authorization server (src/oauth) as a person at a browser would: a
 * user agent with a cookie jar kept across sign-ins (one per origin, as the gateway and the upstream
 * provider share 127.0.0.1), which allows the gateway's consent page (an HTML form with its CSRF token)
 * and signs in at the upstream provider (its pages answered by a PageAnswerer: oidcProviderPages for
 * test/support/oidc-provider.ts, whose interaction routes answer JSON, or keycloakPages for Keycloak's
 * HTML forms), until a redirect leaves both origins: the MCP client's redirect URI.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type refreshAuthorization, UnauthorizedError } from '@modelcontextprotocol/client';
import {
  HeadlessOAuthProvider,
  type HeadlessProviderOptions,
  type OAuthConnection,
  oidcProviderPages,
  type PageAnswerer,
  type UserCredentials,
} from './oauth-clients.ts';
import { type AuthorizationServer, startAuthorizationServer } from './oidc-provider.ts';

export interface AgentStep {
  method: string;
  url: string;
  status: number;
}

export class BrowserAgent {
  /** origin → cookie name → value. */
  private readonly jars = new Map<string, Map<string, string>>();
  /** Every request made, in order. */
  readonly steps: AgentStep[] = [];
  /** How many times the gateway's consent page was shown. */
  consentPages = 0;
  /** The consent pages' HTML, in order. */
  readonly consentPagesText: string[] = [];
  /**
   * Sends a request to the gateway's origin (default: `fetch`); a test may send it to one replica of
   * several instead. Cookies, the consent page and redirects stay the gateway origin's.
   */
  sendToGateway: (url: URL, init: RequestInit) => Promise<Response> = (url, init) => fetch(url, init);

  private readonly upstreamPages: PageAnswerer;

  constructor(
    user: UserCredentials,
    private readonly gatewayOrigin: string,
    private readonly decision: 'allow' | 'deny' = 'allow',
    /** The upstream provider's sign-in pages; default oidc-provider's (test/support/oidc-provider.ts). */
    upstreamPages: (user: UserCredentials) => PageAnswerer = oidcProviderPages,
  ) {
    this.upstreamPages = upstreamPages(user);
  }

  private jar(origin: string): Map<string, string> {
    let jar = this.jars.get(origin);
    if (jar === undefined) {
      jar = new Map();
      this.jars.set(origin, jar);
    }
    return jar;
  }

  async request(url: URL, init: RequestInit = {}): Promise<Response> {
    const jar = this.jar(url.origin);
    const send = url.origin === this.gatewayOrigin ? this.sendToGateway : fetch;
    const response = await send(url, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
      },
    });
    this.steps.push({ method: init.method ?? 'GET', url: url.href, status: response.status });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }

  /** Follows an authorization URL to the client's redirect URI and returns what it carried. */
  async authorize(authorizationUrl: URL | string, upstreamOrigin: string): Promise<URLSearchParams> {
    let next = new URL(authorizationUrl);
    let init: RequestInit = {};
    for (let step = 0; step < 30; step += 1) {
      const response = await this.request(next, init);
      init = {};
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = new URL(response.headers.get('location') ?? '', next);
        if (location.origin !== this.gatewayOrigin && location.origin !== upstreamOrigin) {
          return location.searchParams;
        }
        next = location;
        continue;
      }
      const text = await response.text();
      if (response.status !== 200) {
        throw new Error(
          `authorization stopped at ${next.pathname}: HTTP ${response.status} ${text.slice(0, 300)}`,
        );
      }
      if (next.origin === this.gatewayOrigin) {
        // The gateway's consent page.
        this.consentPages += 1;
        this.consentPagesText.push(text);
        const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
        const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
        if (action === undefined || csrf === undefined)
          throw new Error(`no consent form: ${text.slice(0, 300)}`);
        next = new URL(action.replaceAll('&#38;', '&'), next);
        init = {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, decision: this.decision }).toString(),
        };
        continue;
      }
      // The upstream provider's login or consent.
      const post = this.upstreamPages({ url: next, status: response.status, text });
      next = post.url;
      init = {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: post.form.toString(),
      };
    }
    const trail = this.steps.slice(-8).map((step) => `${step.method} ${step.url} ${step.status}`);
    throw new Error(`authorization did not reach the redirect URI within 30 steps:\n${trail.join('\n')}`);
  }
}

export interface GatewayProviderOptions extends HeadlessProviderOptions {
  agent: BrowserAgent;
  upstreamOrigin: string;
  /** Register by Client ID Metadata Document at this https URL instead of dynamic registration. */
  clientMetadataUrl?: string;
}

/** The v2 SDK's OAuthClientProvider whose user agent is a BrowserAgent (cookies kept between sign-ins). */
export class GatewayOAuthProvider extends HeadlessOAuthProvider {
  readonly clientMetadataUrl: string | undefined;
  private readonly agent: BrowserAgent;
  private readonly upstreamOrigin: string;
  private signIn: Promise<URLSearchParams> | undefined;

  constructor(options: GatewayProviderOptions) {
    super(options);
    this.agent = options.agent;
    this.upstreamOrigin = options.upstreamOrigin;
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  override redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizations += 1;
    this.signIn = this.agent.authorize(authorizationUrl, this.upstreamOrigin);
    this.signIn.catch(() => {});
  }

  override async callbackParams(): Promise<URLSearchParams> {
    if (this.signIn === undefined) throw new Error('no authorization was started');
    const params = await this.signIn;
    this.signIn = undefined;
    return params;
  }
}

/**
 * A workbook read by a client holding only the read scope, as a host makes it: the gateway asks for
 * more (the SDK re-authorizes and throws UnauthorizedError), the code that comes back is exchanged,
 * and the read is made again. Returns that second result.
 */
export async function readWorkbookAfterStepUp(
  connection: OAuthConnection,
  provider: GatewayOAuthProvider,
  path: string,
): Promise<{ isError?: boolean; structuredContent?: { data?: { sheets?: unknown[] } } }> {
  const args = { target: 'workbook', path };
  await assert.rejects(connection.client.callTool({ name: 'dagu_read', arguments: args }), UnauthorizedError);
  await connection.transport.finishAuth(await provider.callbackParams());
  return (await connection.client.callTool({ name: 'dagu_read', arguments: args })) as {
    isError?: boolean;
    structuredContent?: { data?: { sheets?: unknown[] } };
  };
}
// ---- the gateway's upstream, and what its tests read of the tokens -------------------------------

/** The upstream provider's one confidential client, registered for the gateway by an administrator. */
const UPSTREAM_CLIENT = 'dagu-gateway';

/** The operator's one client at an upstream provider, as the gateway's settings name it. */
export interface UpstreamClient {
  issuer: string;
  clientId: string;
  secret: string;
  scopes: string;
}

export interface GatewayUpstream {
  server: AuthorizationServer;
  /** alice, who signs in upstream (email alice@example.com, group readers). */
  user: UserCredentials;
  upstream: UpstreamClient;
  /** The gateway's settings for the built-in server signing in through this upstream. */
  gatewayEnv(publicUrl: string): Record<string, string>;
}

/**
 * oidc-provider as the upstream of the built-in server, standing in for Entra ID or Cognito: no
 * registration endpoint, no resource indicators, one confidential client whose redirect URIs are the
 * callbacks of the gateways at `publicUrls`.
 */
export async function startGatewayUpstream(publicUrls: readonly string[]): Promise<GatewayUpstream> {
  const secret = randomBytes(24).toString('base64url');
  const server = await startAuthorizationServer({
    mcpFeatures: false,
    accounts: { alice: randomBytes(12).toString('base64url') },
    accountClaims: { alice: { email: 'alice@example.com', groups: ['readers'] } },
    clients: [
      {
        client_id: UPSTREAM_CLIENT,
        client_secret: secret,
        redirect_uris: publicUrls.map((url) => `${url}/oauth/callback`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  const upstream = { issuer: server.issuer, clientId: UPSTREAM_CLIENT, secret, scopes: 'openid' };
  return {
    server,
    user: { login: 'alice', password: server.accounts.alice! },
    upstream,
    gatewayEnv: (publicUrl) => ({ PUBLIC_URL: publicUrl, ...builtinServerEnv(upstream) }),
  };
}

/** The settings of the built-in server signing users in through `upstream`. */
export const builtinServerEnv = (upstream: UpstreamClient): Record<string, string> => ({
  AUTH_SERVER: 'builtin',
  OAUTH_UPSTREAM_ISSUER: upstream.issuer,
  OAUTH_UPSTREAM_CLIENT_ID: upstream.clientId,
  OAUTH_UPSTREAM_CLIENT_SECRET: upstream.secret,
  OAUTH_UPSTREAM_SCOPES: upstream.scopes,
});

/** A v2 SDK provider asking for `dagu.read`, whose browser is `agent`, signing in at `upstream`. */
export function newGatewayProvider(
  agent: BrowserAgent,
  user: UserCredentials,
  upstreamOrigin: string,
  options: { clientMetadataUrl?: string } = {},
): GatewayOAuthProvider {
  return new GatewayOAuthProvider({
    user,
    agent,
    upstreamOrigin,
    scope: 'dagu.read',
    clientName: 'builtin-server tests (TypeScript SDK)',
    ...(options.clientMetadataUrl ? { clientMetadataUrl: options.clientMetadataUrl } : {}),
  });
}

/** The claims of a JWT, unverified (the tests read what the gateway put in its own tokens). */
export const decodeJwt = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
    aud?: string;
    iss?: string;
    sub?: string;
    scope?: string;
    email?: string;
    groups?: string[];
  };

/** The built-in server's RFC 8414 metadata, as hosts read it. */
export const serverMetadata = async (publicUrl: string) =>
  (await (await fetch(`${publicUrl}/.well-known/oauth-authorization-server`)).json()) as Parameters<
    typeof refreshAuthorization
  >[1]['metadata'];

/** A form posted to the built-in server's token endpoint: its status and JSON answer. */
export async function tokenRequest(
  publicUrl: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${publicUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
