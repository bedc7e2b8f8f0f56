/**
 * Why a request was ended without being served, as the `reason` label of
 * `mcp_gateway_refused_requests_total` and the audit record say it: too slow (headers, body, serving),
 * headers too large, not HTTP; and JSON-RPC messages outside what the gateway serves (an unknown
 * tool or method, a batch).
 */
export const REFUSAL_REASONS = [
  'headers_timeout',
  'body_timeout',
  'request_timeout',
  'headers_too_large',
  'bad_http',
  'unknown_tool',
  'unknown_method',
  'batch',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];
