/** Why a request was refused at the HTTP layer: the bounded `reason` label of auth failures and audit records. */
export const AUTH_FAILURE_REASONS = [
  'missing_credentials',
  'malformed_header',
  'unknown_key',
  'invalid_token',
  'expired',
  'not_yet_valid',
  'wrong_audience',
  'wrong_issuer',
  'wrong_algorithm',
  'surface_denied',
  'insufficient_scope',
] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];
