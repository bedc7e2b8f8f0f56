import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { auditRefusal, type RefusalAudit, refuse } from './refusals.ts';

export interface HostOriginOptions {
  /** Accepted Host names (port-agnostic); `*` accepts any Host (e.g. behind a proxy that checks it). */
  allowedHosts: readonly string[];
  /**
   * Accepted browser origins: a hostname (any scheme and port, as in the MCP SDK), a full origin
   * `https://app.example:8443`, or `<scheme>://*` for a non-web scheme (browser extensions). Requests
   * without an Origin header (every non-browser client) pass; an empty list refuses every Origin.
   */
  allowedOrigins: readonly string[];
  /**
   * Also accept `http://` origins on loopback hosts (`localhost`, `127.0.0.1`, `[::1]`), any port: a
   * browser-based client on the same machine (MCP Inspector). For a loopback bind with no explicit list.
   */
  loopbackOrigins?: boolean;
  audit?: RefusalAudit;
}

/** `::1` and `[::1]` both mean the IPv6 loopback; URL parsing yields the bracketed, lower-case form. */
function normaliseHost(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.includes(':') && !lower.startsWith('[') ? `[${lower}]` : lower;
}

/** A Host header is a host name or IP literal and an optional port, nothing else. */
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?$/;

/**
 * The host name of a well-formed Host header, else undefined. A Host with a path, a backslash or
 * quotes must not reach the metadata and `WWW-Authenticate` values built from it.
 */
function parseHostname(hostHeader: string): string | undefined {
  if (!HOST_HEADER.test(hostHeader)) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Host names by Host header: every request of a client sends the same Host, and a URL parse per
 * request showed in the profile of the c=1 read path. The answer depends on the header alone;
 * bounded (cleared when full) since the header is the client's to choose.
 */
const hostnames = new Map<string, string | undefined>();
const MAX_HOSTNAMES = 256;
/** A DNS name (253), a port and brackets fit; longer headers are parsed each time, never kept. */
const MAX_KEPT_HOST_CHARS = 270;

function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (hostHeader === undefined) return undefined;
  if (hostnames.has(hostHeader)) return hostnames.get(hostHeader);
  const hostname = parseHostname(hostHeader);
  if (hostHeader.length > MAX_KEPT_HOST_CHARS) return hostname;
  if (hostnames.size >= MAX_HOSTNAMES) hostnames.clear();
  hostnames.set(hostHeader, hostname);
  return hostname;
}

const LOOPBACK_ORIGIN_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An `http://` origin on a loopback host, any port (URL parsing yields `[::1]` and lower case). */
const isLoopbackOrigin = (url: URL) => url.protocol === 'http:' && LOOPBACK_ORIGIN_HOSTS.has(url.hostname);

export function originMatcher(
  allowed: readonly string[],
  options: { loopback?: boolean } = {},
): (origin: string) => boolean {
  const origins = new Set<string>();
  const schemes = new Set<string>();
  const hosts = new Set<string>();
  for (const entry of allowed) {
    const wildcard = /^([a-z][a-z0-9+.-]*):\/\/\*$/i.exec(entry);
    if (wildcard) {
      const scheme = `${wildcard[1]!.toLowerCase()}:`;
      // http://* and https://* would admit every web page, which is what this check is for.
      if (scheme !== 'http:' && scheme !== 'https:') schemes.add(scheme);
    } else if (entry.includes('://')) {
      try {
        origins.add(new URL(entry).origin);
      } catch {
        // A malformed entry admits nothing.
      }
    } else {
      hosts.add(normaliseHost(entry));
    }
  }
  return (origin) => {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false; // includes the opaque `null` origin
    }
    if (url.hostname === '') return schemes.has(url.protocol);
    if (options.loopback === true && isLoopbackOrigin(url)) return true;
    return origins.has(url.origin) || hosts.has(url.hostname) || schemes.has(url.protocol);
  };
}

/**
 * An app-level onRequest hook against DNS rebinding and cross-site requests: a Host outside
 * ALLOWED_HOSTS or an Origin outside ALLOWED_ORIGINS gets 403 `{code, message}` on every route,
 * before authentication runs, and is audited as a denied request.
 */
export function hostOriginHook(options: HostOriginOptions) {
  const anyHost = options.allowedHosts.includes('*');
  const hosts = new Set(options.allowedHosts.map(normaliseHost));
  const originAllowed = originMatcher(options.allowedOrigins, { loopback: options.loopbackOrigins === true });

  function deny(request: FastifyRequest, reply: FastifyReply, code: 'invalid_host' | 'invalid_origin') {
    auditRefusal(options.audit, request, reply, { outcome: code, reason: code, httpStatus: 403 });
    return refuse(reply, code);
  }

  // A callback hook (an async one costs a promise and Fastify's continuation per request); a refusal
  // answers and ends the chain by not calling `done`.
  return function hostOriginCheck(
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    const hostname = hostnameOf(request.host);
    if (hostname === undefined || (!anyHost && !hosts.has(hostname))) {
      deny(request, reply, 'invalid_host');
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== '' && !originAllowed(origin)) {
      deny(request, reply, 'invalid_origin');
      return;
    }
    done();
  };
}

/** The Host/Origin check as an app-wide hook: registered first, it answers before any other hook. */
export const hostOriginPlugin = fp(
  async (app: FastifyInstance, options: HostOriginOptions) => {
    app.addHook('onRequest', hostOriginHook(options));
  },
  { name: 'dagu-mcp-host-origin', fastify: '5.x' },
);
