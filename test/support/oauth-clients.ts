/**
 * OAuth clients for the end-to-end tests against test/support/oidc-provider.ts: a headless user agent
 * that answers the provider's login and consent over HTTP, an `OAuthClientProvider` for the v2
 * TypeScript SDK client that uses it, and a helper that connects that client through the SDK's whole
 * discovery flow (401 → protected-resource metadata → authorization-server metadata → dynamic
 * registration → authorization code with PKCE and `resource` → token).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  Client,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';

export interface UserCredentials {
  login: string;
  password: string;
  /** Scopes the user approves at consent (a subset of the requested ones); default: all requested. */
  approve?: string;
}

/** What the authorization server sent back to the client's redirect URI. */
export type CallbackParams = URLSearchParams;

/** A page the user agent met on its way, and the form it posts next. */
export interface AgentPage {
  url: URL;
  status: number;
  text: string;
}
export interface AgentPost {
  url: URL;
  form: URLSearchParams;
}

/**
 * Plays the user's browser: follows the authorization URL (fetch with manual redirects, cookies
 * carried by hand), lets `answer` fill each page the provider shows (login, consent), until the
 * provider redirects to a URL outside its origin, the client's redirect URI, and returns that
 * redirect's query (code, state, iss, or error). The redirect URI need not listen: it is read from
 * the Location header, never requested.
 */
export async function walkToRedirect(
  authorizationUrl: URL | string,
  answer: (page: AgentPage) => AgentPost,
): Promise<CallbackParams> {
  const start = new URL(authorizationUrl);
  const jar = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      // An expired or emptied cookie is the server deleting it.
      if (value === '' || /expires=Thu, 01 Jan 1970|max-age=0\b/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
  };
  let next: URL = start;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step += 1) {
    const response = await fetch(next, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
      },
    });
    remember(response);
    init = {};
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = new URL(response.headers.get('location') ?? '', next);
      if (location.origin !== start.origin) return location.searchParams;
      next = location;
      continue;
    }
    const post = answer({ url: next, status: response.status, text: await response.text() });
    next = post.url;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: post.form.toString(),
    };
  }
  throw new Error('authorization did not reach the redirect URI within 20 steps');
}

/** Fills the pages of one provider's sign-in: given a page, the form the user posts next. */
export type PageAnswerer = (page: AgentPage) => AgentPost;

/**
 * The user at test/support/oidc-provider.ts: its interaction routes describe the prompt as JSON;
 * the login posts `login` and `password`, the consent the scopes approved (default: all requested).
 */
export const oidcProviderPages =
  (user: UserCredentials): PageAnswerer =>
  ({ url, status, text }) => {
    const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (status !== 200 || interaction === null) {
      throw new Error(`authorization stopped at ${url.pathname}: HTTP ${status} ${text.slice(0, 300)}`);
    }
    // The sign-in page answers a non-HTML request with JSON naming where to post the form.
    const { prompt, post } = JSON.parse(text) as { prompt: string; post?: { url?: string } };
    if (post?.url === undefined) throw new Error(`the sign-in page named no endpoint to post to: ${text}`);
    const form = new URLSearchParams();
    if (prompt === 'login') {
      form.set('login', user.login);
      form.set('password', user.password);
    } else if (prompt === 'consent') {
      if (user.approve !== undefined) form.set('scope', user.approve);
    } else {
      throw new Error(`unexpected interaction prompt ${prompt}`);
    }
    return { url: new URL(post.url), form };
  };

/** The user agent at test/support/oidc-provider.ts (oidcProviderPages). */
export function authorizeHeadless(
  authorizationUrl: URL | string,
  user: UserCredentials,
): Promise<CallbackParams> {
  return walkToRedirect(authorizationUrl, oidcProviderPages(user));
}

export interface HeadlessProviderOptions {
  user: UserCredentials;
  /** Registered as `client_name` (the authorization server may key policy on it). */
  clientName?: string;
  /** Scope the client asks for when the resource metadata names none. */
  scope?: string;
  /** Where the authorization server sends the code; nothing listens there. */
  redirectUrl?: string;
  /** The user agent that answers the provider's pages; default authorizeHeadless (oidc-provider's). */
  userAgent?: (authorizationUrl: URL, user: UserCredentials) => Promise<CallbackParams>;
}

/**
 * The v2 SDK's OAuthClientProvider with in-memory storage. `redirectToAuthorization` runs the headless
 * user agent at once and keeps what came back to the redirect URI for `callbackParams()`.
 */
export class HeadlessOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  client: StoredOAuthClientInformation | undefined;
  stored: StoredOAuthTokens | undefined;
  /** Every token set saved, oldest first (a refresh appends one). */
  readonly history: StoredOAuthTokens[] = [];
  authorizations = 0;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private pending: Promise<CallbackParams> | undefined;
  private readonly user: UserCredentials;
  private readonly userAgent: NonNullable<HeadlessProviderOptions['userAgent']>;
  /** Every authorization URL the SDK sent the user to, oldest first. */
  readonly authorizationUrls: URL[] = [];

  constructor(options: HeadlessProviderOptions) {
    this.user = options.user;
    this.userAgent = options.userAgent ?? authorizeHeadless;
    // A loopback redirect URI of a native application (RFC 8252); the port is never opened.
    this.redirectUrl = options.redirectUrl ?? 'http://127.0.0.1:9/oauth/callback';
    this.clientMetadata = {
      client_name: options.clientName ?? 'gateway-tests (TypeScript SDK)',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(options.scope ? { scope: options.scope } : {}),
    };
  }

  state(): string {
    return randomBytes(16).toString('base64url');
  }
  clientInformation(_ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.client = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.stored = tokens;
    this.history.push(tokens);
  }
  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizations += 1;
    this.authorizationUrls.push(authorizationUrl);
    this.pending = this.userAgent(authorizationUrl, this.user);
    // Awaited by callbackParams(); kept from being reported as unhandled in between.
    this.pending.catch(() => {});
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier saved');
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.stored = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
  /** What the redirect URI received for the last authorization request. */
  async callbackParams(): Promise<CallbackParams> {
    if (this.pending === undefined) throw new Error('no authorization was started');
    const params = await this.pending;
    this.pending = undefined;
    return params;
  }
}

export interface OAuthConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  provider: HeadlessOAuthProvider;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'gateway-oauth-tests', version: '1.0.0' };

/** The names in a `dags` read; fails on a tool error. */
export async function readDags(client: Client): Promise<string[]> {
  const result = (await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } })) as {
    isError?: boolean;
    structuredContent?: { data?: { items?: Array<{ name: string }> } };
  };
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  return (result.structuredContent?.data?.items ?? []).map((item) => item.name);
}

/**
 * Connects the v2 SDK client as an MCP host does: the first connect is refused (401), the SDK
 * discovers, registers and sends the user to the authorization URL; the code that comes back is handed
 * to `transport.finishAuth`, and a second connect goes through with the token.
 */
export async function connectWithOAuth(
  mcpUrl: string,
  provider: HeadlessOAuthProvider,
): Promise<OAuthConnection> {
  const open = () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    return { client, transport };
  };
  let { client, transport } = open();
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(await provider.callbackParams());
    await client.close();
    ({ client, transport } = open());
    await client.connect(transport);
  }
  return { client, transport, provider, close: () => client.close() };
}
