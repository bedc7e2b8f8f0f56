/**
 * Drives the gateway's built-in authorization server (src/oauth) as a person at a browser would: a
 * user agent with a cookie jar kept across sign-ins (one per origin, as the gateway and the upstream
 * provider share 127.0.0.1), which allows the gateway's consent page (an HTML form with its CSRF token)
 * and signs in at the upstream provider (its pages answered by a PageAnswerer: oidcProviderPages for
 * test/support/oidc-provider.ts, whose interaction routes answer JSON, or keycloakPages for Keycloak's
 * HTML forms), until a redirect leaves both origins: the MCP client's redirect URI.
 */
import {
  HeadlessOAuthProvider,
  type HeadlessProviderOptions,
  oidcProviderPages,
  type PageAnswerer,
  type UserCredentials,
} from './oauth-clients.ts';

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

  private readonly upstreamPages: PageAnswerer;

  constructor(
    user: UserCredentials,
    private readonly gatewayOrigin: string,
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
    const response = await fetch(url, {
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
        const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
        const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
        if (action === undefined || csrf === undefined)
          throw new Error(`no consent form: ${text.slice(0, 300)}`);
        next = new URL(action.replaceAll('&#38;', '&'), next);
        init = {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, decision: 'allow' }).toString(),
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
