import * as oidc from 'openid-client';
import { isLoopbackHost } from '../config.ts';

/** The OpenID Connect provider users sign in with: one confidential client the operator registered. */
export interface UpstreamSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  /** `<PUBLIC_URL>/oauth/callback`: registered at the provider. */
  redirectUri: string;
}

/** What one sign-in needs to remember between the redirect and the callback. */
export interface UpstreamChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface Upstream {
  /** The origin of the provider's authorization endpoint, where the consent form's answer leads. */
  authorizationOrigin: string;
  /** The provider's authorization URL for a new sign-in (code flow, PKCE S256, state, nonce). */
  authorizationUrl(): Promise<{ url: URL; checks: UpstreamChecks }>;
  /**
   * Redeems the code the provider sent to the callback and returns the ID token's claims. The
   * provider's tokens stay here: they are never stored, passed on, or sent to Dagu.
   */
  signIn(callback: URL, checks: UpstreamChecks): Promise<Record<string, unknown>>;
}

/** Reads the provider's discovery document (once, at start-up) with panva's openid-client. */
export async function discoverUpstream(settings: UpstreamSettings): Promise<Upstream> {
  const issuer = new URL(settings.issuer);
  // Plain HTTP only for a provider on this machine (tests, the demo); config.ts refuses it elsewhere.
  const insecure = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
  const config = await oidc.discovery(
    issuer,
    settings.clientId,
    undefined,
    // client_secret_basic: the method RFC 6749 §2.3.1 has every provider support.
    oidc.ClientSecretBasic(settings.clientSecret),
    insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
  return {
    authorizationOrigin: new URL(config.serverMetadata().authorization_endpoint ?? settings.issuer).origin,
    async authorizationUrl() {
      const checks = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        codeVerifier: oidc.randomPKCECodeVerifier(),
      };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes,
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url, checks };
    },
    async signIn(callback, checks) {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      return { ...(tokens.claims() ?? {}) };
    },
  };
}
