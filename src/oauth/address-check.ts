import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a Client ID Metadata Document may be fetched from: public unicast only. A client id
 * is a URL anyone can choose, so without this check the gateway would fetch from its own network for
 * them (SSRF). Loopback is a separate class a test or local demo may allow.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) address carries. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (match === null) return undefined;
  if (match[1] !== undefined) return match[1];
  const high = Number.parseInt(match[2]!, 16);
  const low = Number.parseInt(match[3]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address (no brackets) may be connected to for a client's metadata document. */
export function checkAddress(address: string, options: { allowLoopback: boolean }): AddressVerdict {
  const family = isIP(address);
  if (family === 0) return { ok: false, reason: `"${address}" is not an IP address` };
  const mapped = family === 6 ? embeddedIpv4(address) : undefined;
  if (mapped !== undefined) return checkAddress(mapped, options);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(address, type)) {
    return options.allowLoopback ? { ok: true } : { ok: false, reason: `${address} is a loopback address` };
  }
  if (NON_PUBLIC.check(address, type)) {
    return { ok: false, reason: `${address} is a private, link-local or reserved address` };
  }
  return { ok: true };
}
