/**
 * The built-in authorization server's audited events and their outcomes, as the `event` and
 * `outcome` labels of `mcp_gateway_oauth_events_total` say them. Outcomes are OAuth error codes
 * (RFC 6749, RFC 8707, RFC 7591); any other is counted as `other`, so the label stays bounded.
 */
export const OAUTH_EVENTS = ['registration', 'consent', 'grant', 'token', 'revocation', 'refused'] as const;
export type OAuthEvent = (typeof OAUTH_EVENTS)[number];

export const OAUTH_OUTCOMES = [
  'ok',
  'access_denied',
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'invalid_target',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'unauthorized_client',
  'unsupported_grant_type',
  'server_error',
  'temporarily_unavailable',
  'other',
] as const;
export type OAuthOutcome = (typeof OAUTH_OUTCOMES)[number];

const KNOWN: ReadonlySet<string> = new Set(OAUTH_OUTCOMES);

/** An audit record's outcome as a bounded label value. */
export const oauthOutcome = (outcome: string | undefined): OAuthOutcome =>
  outcome !== undefined && KNOWN.has(outcome) ? (outcome as OAuthOutcome) : 'other';
