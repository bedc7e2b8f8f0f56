/**
 * The JWKS URL of an issuer, read from its discovery document at start-up: OpenID Connect Discovery
 * (`/.well-known/openid-configuration`), then RFC 8414 authorization-server metadata
 * (`/.well-known/oauth-authorization-server`). The document must name the configured issuer exactly
 * (RFC 8414 §3.3, OpenID Discovery §4.3), which is also what every token's `iss` will carry.
 */
import { type Log, silentLog } from '../core/log.ts';

export class IssuerDiscoveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IssuerDiscoveryError';
  }
}

/**
 * Where an issuer's metadata may be, in the order tried. Without a path all forms are the same two
 * URLs; with one (`https://idp/realms/x`), OpenID appends the well-known suffix to the issuer, and
 * RFC 8414 inserts it between the host and the path (§3.1; §5 gives the same rule for OpenID).
 */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const urls = [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  return [...new Set(urls)];
}

export interface DiscoveryOptions {
  log?: Log;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface DiscoveredIssuer {
  jwksUrl: string;
  /** The document it was read from. */
  documentUrl: string;
}

/** One document: its `issuer` and `jwks_uri`, or why it cannot be used. */
async function readDocument(
  url: string,
  timeoutMs: number,
  maxBytes: number,
): Promise<{ issuer: string; jwksUri: unknown } | { problem: string }> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { problem: cause ?? (error as Error).message };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { problem: `HTTP ${response.status}` };
  }
  const text = await response.text();
  if (Buffer.byteLength(text) > maxBytes) return { problem: `larger than ${maxBytes} bytes` };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { problem: 'not JSON' };
  }
  const { issuer, jwks_uri: jwksUri } = (document ?? {}) as { issuer?: unknown; jwks_uri?: unknown };
  if (typeof issuer !== 'string') return { problem: 'no "issuer" in the document' };
  return { issuer, jwksUri };
}

const withoutTrailingSlash = (issuer: string) => issuer.replace(/\/+$/, '');

/**
 * Reads the issuer's discovery document and returns its `jwks_uri`. Throws IssuerDiscoveryError
 * naming every URL tried and what each answered; when a document names the issuer with or without a
 * trailing slash the configured one lacks or has, the error names the issuer to configure.
 */
export async function discoverJwksUrl(
  issuer: string,
  options: DiscoveryOptions = {},
): Promise<DiscoveredIssuer> {
  const log = options.log ?? silentLog;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const tried: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    const read = await readDocument(url, timeoutMs, maxBytes);
    if ('problem' in read) {
      tried.push(`${url}: ${read.problem}`);
      continue;
    }
    if (read.issuer !== issuer) {
      if (withoutTrailingSlash(read.issuer) === withoutTrailingSlash(issuer)) {
        throw new IssuerDiscoveryError(
          `AUTH_JWT_ISSUER is "${issuer}" but the provider reports its issuer as "${read.issuer}" ` +
            `(${url}); tokens carry the provider's, so every one would be refused as wrong_issuer: ` +
            `set AUTH_JWT_ISSUER=${read.issuer}`,
        );
      }
      tried.push(`${url}: names another issuer, "${read.issuer}"`);
      continue;
    }
    if (typeof read.jwksUri !== 'string' || !/^https?:\/\/[^\s]+$/.test(read.jwksUri)) {
      tried.push(`${url}: no http(s) "jwks_uri"`);
      continue;
    }
    log.info({ issuer, document: url, jwksUrl: read.jwksUri }, "JWKS URL read from the issuer's metadata");
    return { jwksUrl: read.jwksUri, documentUrl: url };
  }
  throw new IssuerDiscoveryError(
    `AUTH_JWT_ISSUER=${issuer}: cannot read the JWKS URL from the issuer's discovery document ` +
      `(${tried.join('; ')}); check the issuer, or set AUTH_JWKS_URL`,
  );
}
