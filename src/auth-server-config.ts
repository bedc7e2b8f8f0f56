/** The built-in authorization server (src/oauth): the hosts' side, and the provider users sign in with. */
export interface AuthServerConfig {
  upstream: { issuer: string; clientId: string; clientSecret: string; scopes: string };
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
  dynamicRegistration: boolean;
  /** OAUTH_CLIENTS_FILE: clients an administrator registered ahead; undefined: none. */
  clientsFile: string | undefined;
  /** Where registrations, grants, refresh tokens and signing keys live: Redis when set, else the folder. */
  state: { dir: string; redisUrl: string | undefined };
  signingKeyRotateS: number;
  /** Requests one client address may make in a minute (discovery and keys not counted). */
  ratePerMinute: number;
  clientIdMetadata: {
    enabled: boolean;
    /** Host names whose documents may be fetched; undefined: any public host. */
    hosts: string[] | undefined;
    maxBytes: number;
    timeoutMs: number;
    cacheMaxS: number;
    allowLoopback: boolean;
    /** PEM CA certificates trusted for the fetch; undefined: Node's bundled CAs. */
    caFile: string | undefined;
  };
}
