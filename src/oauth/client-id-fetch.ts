import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { checkAddress } from './address-check.ts';

export interface ClientIdFetchOptions {
  /** Host names whose documents may be fetched; undefined: any host with a public address. */
  hosts: readonly string[] | undefined;
  allowLoopback: boolean;
  timeoutMs: number;
  /** The largest document read; a longer one is refused as soon as it passes the limit. */
  maxBytes: number;
  /** PEM file of the CAs trusted (tests' own CA); undefined: Node's bundled CAs. */
  caFile?: string | undefined;
}

/** Why a Client ID Metadata Document was not fetched; oidc-provider reports it as `invalid_client`. */
export class ClientIdFetchRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientIdFetchRefused';
  }
}

/** The whole body, or a refusal once it passes `maxBytes` (the rest is never read). */
async function readLimited(body: AsyncIterable<Uint8Array> | null, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.length;
    if (size > maxBytes) throw new ClientIdFetchRefused(`the document is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The fetch oidc-provider uses for Client ID Metadata Documents: https only, the host on the
 * allowlist when there is one, and every address the name resolves to checked before connecting (the
 * connection uses the checked address, so a second DNS answer cannot swap it). No redirect is followed
 * (oidc-provider refuses any status but 200), the body is read here up to its limit, and the whole fetch
 * has a deadline.
 */
export function createClientIdFetch(options: ClientIdFetchOptions) {
  const guard = { allowLoopback: options.allowLoopback };
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const refused = addresses.map((entry) => checkAddress(entry.address, guard)).find((v) => !v.ok);
      if (refused !== undefined && !refused.ok) {
        return callback(new ClientIdFetchRefused(`${hostname}: ${refused.reason}`), '', 4);
      }
      if (lookupOptions.all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (first === undefined) return callback(new ClientIdFetchRefused(`${hostname}: no address`), '', 4);
      callback(null, first.address, first.family);
    });
  };
  const dispatcher = new Agent({
    connect: {
      lookup,
      ...(options.caFile === undefined ? {} : { ca: readFileSync(options.caFile, 'utf8') }),
    },
  });

  const fetchDocument = async (url: string | URL, init: RequestInit & { signal?: AbortSignal }) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') throw new ClientIdFetchRefused('a client id URL must use https');
    const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (options.hosts !== undefined && !options.hosts.includes(host)) {
      throw new ClientIdFetchRefused(`${host} is not in OAUTH_CLIENT_ID_HOSTS`);
    }
    // An address literal is connected to without a lookup, so it is checked here.
    if (isIP(host) !== 0) {
      const verdict = checkAddress(host, guard);
      if (!verdict.ok) throw new ClientIdFetchRefused(verdict.reason);
    }
    const signal = AbortSignal.any([
      AbortSignal.timeout(options.timeoutMs),
      ...(init.signal ? [init.signal] : []),
    ]);
    const { dispatcher: _theirs, ...rest } = init as RequestInit & { dispatcher?: unknown };
    const response = await undiciFetch(target, {
      ...(rest as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      signal,
      dispatcher,
    });
    const headers = new Headers(response.headers as unknown as Headers);
    if (response.status !== 200) {
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers });
    }
    return new Response(new Uint8Array(await readLimited(response.body, options.maxBytes)), {
      status: 200,
      headers,
    });
  };
  return { fetch: fetchDocument, close: () => dispatcher.close() };
}
