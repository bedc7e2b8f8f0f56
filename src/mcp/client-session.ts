import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { cutToCodePoints } from '../core/code-points.ts';
import { type ClientInfo, clientInfoOf, MAX_CLIENT_NAME, MAX_CLIENT_VERSION } from './request-message.ts';

/**
 * Initialize-era clients name themselves only in `initialize`; a stateless endpoint never sees that
 * message again. So `initialize` is answered with an `Mcp-Session-Id` that carries the client's
 * declared name and version, and the client sends it back on every later request (the transport
 * requires it to), where the audit reads the name from it. The gateway keeps no session state: an id
 * it cannot read (another version, a hand-made header) is ignored, never refused. The name is the
 * client's own claim, exactly like `clientInfo`, and decides nothing about access.
 *
 * Shape: `c1.<base64url JSON [name, version]>.<16 random bytes, base64url>`: visible ASCII only, as
 * the transport requires, and unique per `initialize`.
 */
const PREFIX = 'c1.';
/**
 * The longest id `clientSessionId` issues for a name and version already cut (by `clientInfoOf`):
 * each code point is at most 6 bytes of JSON (a control character or lone surrogate as `\uXXXX`), plus
 * the brackets, quotes and comma; base64url-encoded; then `.` and the 22 characters of the nonce.
 */
const MAX_CLAIM_BYTES = 6 * (MAX_CLIENT_NAME + MAX_CLIENT_VERSION) + 7;
const MAX_ID_LENGTH = PREFIX.length + Math.ceil((MAX_CLAIM_BYTES * 4) / 3) + 1 + 22;

export function clientSessionId(info: ClientInfo): string | undefined {
  if (info.name === undefined) return undefined;
  const claim = Buffer.from(JSON.stringify([info.name, info.version ?? null])).toString('base64url');
  return `${PREFIX}${claim}.${randomBytes(16).toString('base64url')}`;
}

/** The client a session id from `clientSessionId` names, or undefined for any other header value. */
export function clientInfoFromSessionId(header: unknown): ClientInfo | undefined {
  if (typeof header !== 'string' || header.length > MAX_ID_LENGTH || !header.startsWith(PREFIX)) {
    return undefined;
  }
  const end = header.indexOf('.', PREFIX.length);
  if (end < 0) return undefined;
  const claim = header.slice(PREFIX.length, end);
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(claim, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(decoded) || typeof decoded[0] !== 'string') return undefined;
  const version =
    typeof decoded[1] === 'string' ? cutToCodePoints(decoded[1], MAX_CLIENT_VERSION) : undefined;
  return { name: cutToCodePoints(decoded[0], MAX_CLIENT_NAME), version };
}

/** What the audit records of a request's client. */
export interface DeclaredClient {
  clientName: string | undefined;
  clientVersion: string | undefined;
  userAgent: string | undefined;
}

/**
 * Who the client of a request says it is: the message's own `clientInfo`, else the one its session id
 * carries (initialize-era clients after `initialize`); and its HTTP User-Agent, cut to 128 characters.
 */
export function declaredClient(message: unknown, headers: IncomingHttpHeaders): DeclaredClient {
  const info = clientInfoOf(message);
  const client = info.name === undefined ? clientInfoFromSessionId(headers['mcp-session-id']) : info;
  const userAgent = headers['user-agent'];
  return {
    clientName: client?.name,
    clientVersion: client?.version,
    userAgent: typeof userAgent === 'string' ? cutToCodePoints(userAgent, 128) : undefined,
  };
}
