/**
 * A real OAuth 2.1 / OpenID authorization server for the end-to-end auth tests: panva's oidc-provider
 * (OpenID Certified), in-process on 127.0.0.1, configured as a production deployment in front of MCP
 * servers would be: open dynamic client registration, PKCE required (oidc-provider implements S256
 * only), resource indicators (RFC 8707) issuing JWT access tokens per resource server, refresh tokens
 * for clients granted `offline_access` (rotated by the library's default policy), the client-credentials
 * grant, revocation. No development interactions: the login and consent routes below are the
 * application's own, answered over HTTP by the tests (see oauth-clients.ts). Signing keys are generated
 * at start and live only in memory.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, {
  type Adapter,
  type AdapterPayload,
  type ClientMetadata,
  type Configuration,
  errors,
  type JWK,
} from 'oidc-provider';

/** The gateway's scopes: read, and workbook reads. */
export const DAGU_SCOPES = ['dagu.read', 'dagu.workbook'] as const;

/** What the gateway, as a resource server, declares: its scopes. */
export interface ResourceServerSpec {
  scope: string;
}

export interface AuthorizationServerOptions {
  /** Resource servers by resource indicator (the MCP endpoint URL); more can be added later. */
  resourceServers?: Record<string, ResourceServerSpec>;
  /** Access-token lifetime in seconds, per client (its registered `client_name`). Default 600. */
  accessTokenTTL?: number | ((client: { clientId: string; clientName: string | undefined }) => number);
  /**
   * Every scope a resource server here may declare: clients register with them and the metadata
   * lists them. Default DAGU_SCOPES.
   */
  scopes?: readonly string[];
  /** Accounts the login route accepts: account id → password. Default `{ alice: <random> }`. */
  accounts?: Record<string, string>;
  /**
   * `false` keeps no `scope` on a registered client, so it may later ask for more of the resource's
   * scopes (MCP step-up; consent still decides). oidc-provider pins a client to the scope it registered
   * with, and the MCP SDKs register with the scope of the first challenge. Default true (pinned).
   */
  pinClientScopes?: boolean;
  /**
   * `false` stands in for Entra ID, Cognito or Google: no registration endpoint and no resource
   * indicators (tokens are for the client itself), only the clients in `clients`. Default true.
   */
  mcpFeatures?: boolean;
  /** Clients registered by an administrator (the gateway's confidential client upstream). */
  clients?: ClientMetadata[];
  /** Claims of each account beyond `sub` (`email`, `groups`), put in its ID tokens. */
  accountClaims?: Record<string, Record<string, unknown>>;
}

export interface AuthorizationServer {
  /** `http://127.0.0.1:<port>`: the issuer, and the base of every endpoint. */
  issuer: string;
  jwksUrl: string;
  tokenEndpoint: string;
  registrationEndpoint: string;
  accounts: Readonly<Record<string, string>>;
  /** The `kid` new access tokens are signed with. */
  currentKid(): string;
  /** Every `kid` the JWKS document publishes. */
  publishedKids(): string[];
  /** When the JWKS document was fetched (ms since the epoch), oldest first. */
  jwksFetches(): readonly number[];
  addResourceServer(resource: string, spec: ResourceServerSpec): void;
  /**
   * A new signing key becomes current: tokens issued from now on carry its `kid`. With
   * `dropPrevious` the JWKS stops publishing the keys before it; otherwise they stay published
   * (what a rotation does while tokens signed with them are still alive). Returns the new `kid`.
   */
  rotateKeys(options?: { dropPrevious?: boolean }): string;
  /** Deletes a registered client and every grant and token issued to it (what an admin does). */
  revokeClient(clientId: string): Promise<void>;
  /** Provider errors seen so far (`server_error` and friends), for assertions and diagnosis. */
  errors(): readonly string[];
  stop(): Promise<void>;
}

interface StoredEntry {
  payload: AdapterPayload;
  expiresAt: number;
}

/**
 * oidc-provider's storage interface over one Map per authorization server (the library's bundled
 * MemoryAdapter keeps one module-wide store, which two servers or a re-created provider would share).
 */
function memoryAdapterFactory(
  store: Map<string, StoredEntry>,
  pinClientScopes: boolean,
): (name: string) => Adapter {
  const live = (key: string): AdapterPayload | undefined => {
    const entry = store.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  return (name) => {
    const key = (id: string) => `${name}:${id}`;
    const findBy = (field: 'uid' | 'userCode', value: string) => {
      for (const [stored, entry] of store) {
        if (stored.startsWith(`${name}:`) && entry.payload[field] === value) return live(stored);
      }
      return undefined;
    };
    return {
      async upsert(id, payload, expiresIn) {
        const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
        if (name === 'Client' && !pinClientScopes) {
          const { scope: _registered, ...unpinned } = payload;
          store.set(key(id), { payload: unpinned, expiresAt });
          return;
        }
        store.set(key(id), { payload, expiresAt });
      },
      async find(id) {
        return live(key(id));
      },
      async findByUid(uid) {
        return findBy('uid', uid);
      },
      async findByUserCode(userCode) {
        return findBy('userCode', userCode);
      },
      async consume(id) {
        const payload = live(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const [stored, entry] of store) if (entry.payload.grantId === grantId) store.delete(stored);
      },
    };
  };
}

/** An RS256 signing key as a private JWK with a fresh `kid`. */
function newSigningKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' } as JWK;
}

const readForm = async (req: IncomingMessage): Promise<URLSearchParams> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
};

const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
};

/** Starts the authorization server on 127.0.0.1 (free port). */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The login or consent form a browser shows: posts to the same routes the tests' user agent uses. */
function interactionPage(uid: string, prompt: string, params: Record<string, unknown>): string {
  const action = `/interaction/${encodeURIComponent(uid)}/${prompt === 'login' ? 'login' : 'confirm'}`;
  const client = escapeHtml(String(params.client_id ?? ''));
  const fields =
    prompt === 'login'
      ? '<label>User <input name="login" autofocus></label> <label>Password <input name="password" type="password"></label>'
      : `<p>Client <code>${client}</code> asks for <code>${escapeHtml(String(params.scope ?? ''))}</code>.</p>`;
  return `<!doctype html><meta charset="utf-8"><title>Sign in</title><form method="post" action="${action}">${fields} <button>${prompt === 'login' ? 'Sign in' : 'Allow'}</button></form>`;
}

export async function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): Promise<AuthorizationServer> {
  const resourceServers = new Map(Object.entries(options.resourceServers ?? {}));
  const accounts = options.accounts ?? { alice: randomBytes(12).toString('base64url') };
  const store = new Map<string, StoredEntry>();
  const cookieKeys = [randomBytes(32).toString('base64url')];
  const seen: string[] = [];
  const jwksFetches: number[] = [];
  let keys: JWK[] = [newSigningKey()];
  let current = keys[0]!.kid!;
  // OpenID's scopes (`offline_access` asks for a refresh token) and the resource servers' ones.
  const configuredScopes = ['openid', 'offline_access', ...(options.scopes ?? DAGU_SCOPES)];

  const ttlFor = (clientId: string, clientName: unknown): number => {
    const ttl = options.accessTokenTTL ?? 600;
    return typeof ttl === 'number'
      ? ttl
      : ttl({ clientId, clientName: typeof clientName === 'string' ? clientName : undefined });
  };

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const mcpFeatures = options.mcpFeatures ?? true;
  const configuration = (): Configuration => ({
    adapter: memoryAdapterFactory(store, options.pinClientScopes ?? true),
    jwks: { keys },
    cookies: { keys: cookieKeys },
    scopes: mcpFeatures ? configuredScopes : ['openid', 'offline_access'],
    claims: { openid: ['sub', 'groups', 'email', 'preferred_username'] },
    // The account's claims go into its ID token, as Entra ID and Cognito put `email` and `groups` there.
    conformIdTokenClaims: mcpFeatures,
    ...(options.clients ? { clients: options.clients } : {}),
    async findAccount(_ctx, id) {
      return Object.hasOwn(accounts, id)
        ? { accountId: id, claims: () => ({ sub: id, ...options.accountClaims?.[id] }) }
        : undefined;
    },
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: mcpFeatures },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: mcpFeatures,
        // A code exchange or refresh without `resource` gets a token for the resource it was granted for.
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator, client) {
          const spec = resourceServers.get(resourceIndicator);
          if (spec === undefined) throw new errors.InvalidTarget();
          return {
            scope: spec.scope,
            audience: resourceIndicator,
            accessTokenTTL: ttlFor(client.clientId, client.clientName),
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256', kid: current } },
          };
        },
      },
    },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
      RefreshToken: 86_400,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError(ctx, out) {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });

  const build = (): Provider => {
    const provider = new Provider(issuer, configuration());
    provider.on('server_error', (_ctx, error) => seen.push(`server_error: ${error.message}`));
    provider.on('grant.error', (_ctx, error) => seen.push(`grant.error: ${error.message}`));
    provider.on('registration_create.error', (_ctx, error) =>
      seen.push(`registration_create.error: ${error.message}`),
    );
    return provider;
  };
  let provider = build();
  let handle = provider.callback();

  /**
   * The application's interaction routes (oidc-provider leaves login and consent to the host):
   * GET /interaction/:uid describes the prompt as JSON; POST /interaction/:uid/login takes `login`
   * and `password`; POST /interaction/:uid/confirm grants the requested scopes, or only those in
   * `scope` when the form names some (a user unticking a scope: the others are rejected).
   */
  async function interaction(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const [, , uid, action] = path.split('/');
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return sendJson(res, 400, { error: 'interaction_mismatch' });
    if (req.method === 'GET' && action === undefined) {
      // A person at a browser (npm run demo -- --oauth) gets a form; the tests' user agent, JSON.
      if ((req.headers.accept ?? '').includes('text/html')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return void res.end(interactionPage(details.uid, details.prompt.name, details.params));
      }
      // A client that asked for something other than HTML learns where the form would have posted.
      const login = details.prompt.name === 'login';
      return sendJson(res, 200, {
        uid: details.uid,
        prompt: details.prompt.name,
        details: details.prompt.details,
        client_id: details.params.client_id,
        scope: details.params.scope,
        post: {
          url: new URL(
            `/interaction/${encodeURIComponent(details.uid)}/${login ? 'login' : 'confirm'}`,
            issuer,
          ).href,
          content_type: 'application/x-www-form-urlencoded',
          fields: login ? ['login', 'password'] : ['scope (optional: the scopes granted, space-separated)'],
        },
        html: 'ask with Accept: text/html for the form',
      });
    }
    if (req.method === 'POST' && action === 'login' && details.prompt.name === 'login') {
      const form = await readForm(req);
      const login = form.get('login') ?? '';
      if (!Object.hasOwn(accounts, login) || accounts[login] !== form.get('password')) {
        return sendJson(res, 401, { error: 'invalid_credentials' });
      }
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: login } },
        {
          mergeWithLastSubmission: false,
        },
      );
    }
    if (req.method === 'POST' && action === 'confirm' && details.prompt.name === 'consent') {
      const form = await readForm(req);
      const accountId = details.session?.accountId;
      const clientId = details.params.client_id;
      if (typeof accountId !== 'string' || typeof clientId !== 'string') {
        return sendJson(res, 400, { error: 'no_session' });
      }
      // The consent answers the whole request: a new grant holds the requested scopes the user
      // approved and rejects the others. A rejected scope is not asked for again (oidc-provider
      // prompts for scopes neither granted nor rejected) until a request forces consent
      // (`prompt=consent`, which the Python MCP SDK sends when it asks for `offline_access`): then the
      // user decides afresh.
      const requested = String(details.params.scope ?? '')
        .split(' ')
        .filter((scope) => scope !== '');
      const approved = form.get('scope')?.split(' ');
      const decide = (asked: readonly string[]) => ({
        granted: asked.filter((scope) => approved === undefined || approved.includes(scope)),
        rejected: asked.filter((scope) => approved !== undefined && !approved.includes(scope)),
      });
      const grant = new provider.Grant({ accountId, clientId });
      const oidc = decide(requested.filter((scope) => configuredScopes.includes(scope)));
      if (oidc.granted.length > 0) grant.addOIDCScope(oidc.granted);
      if (oidc.rejected.length > 0) grant.rejectOIDCScope(oidc.rejected);
      const missing = details.prompt.details as { missingResourceScopes?: Record<string, string[]> };
      const indicators = new Set([
        ...Object.keys(missing.missingResourceScopes ?? {}),
        ...[details.params.resource].flat().filter((value): value is string => typeof value === 'string'),
      ]);
      for (const resource of indicators) {
        const offered = resourceServers.get(resource)?.scope.split(' ') ?? [];
        const decision = decide(requested.filter((scope) => offered.includes(scope)));
        if (decision.granted.length > 0) grant.addResourceScope(resource, decision.granted);
        if (decision.rejected.length > 0) grant.rejectResourceScope(resource, decision.rejected);
      }
      const grantId = await grant.save();
      return provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        {
          mergeWithLastSubmission: true,
        },
      );
    }
    return sendJson(res, 400, { error: 'unexpected_interaction', prompt: details.prompt.name });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/interaction/')) {
      interaction(req, res, path).catch((error: unknown) => {
        seen.push(`interaction: ${(error as Error).message}`);
        if (!res.headersSent) sendJson(res, 400, { error: 'interaction_failed' });
        else res.end();
      });
      return;
    }
    if (path === '/jwks') jwksFetches.push(Date.now());
    handle(req, res);
  });

  const publicKids = () => keys.map((key) => key.kid!);

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    registrationEndpoint: `${issuer}/reg`,
    accounts,
    currentKid: () => current,
    publishedKids: publicKids,
    jwksFetches: () => jwksFetches,
    addResourceServer(resource, spec) {
      resourceServers.set(resource, spec);
    },
    rotateKeys({ dropPrevious = false } = {}) {
      const next = newSigningKey();
      keys = dropPrevious ? [next] : [next, ...keys];
      current = next.kid!;
      // oidc-provider reads its key set once, at construction: a rotation is a new provider instance
      // on the same storage, cookie keys and listener (a rolling restart with the new key set).
      provider = build();
      handle = provider.callback();
      return current;
    },
    async revokeClient(clientId) {
      for (const [stored, entry] of store) {
        if (stored === `Client:${clientId}` || entry.payload.clientId === clientId) store.delete(stored);
      }
    },
    errors: () => seen,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
