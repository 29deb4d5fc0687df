import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import net from "node:net";

/**
 * Request-forgery guard: a webhook may not reach this machine, its private
 * network, or link-local addresses (cloud metadata at 169.254.169.254),
 * unless WEBHOOKS_ALLOW_PRIVATE=true. A host name counts by every address it
 * resolves to, and the check runs again at each connection (guardedLookup),
 * so a name that resolves elsewhere later (DNS rebinding) is still refused.
 */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24], // documentation (TEST-NET-1)
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation (TEST-NET-2)
  ["203.0.113.0", 24], // documentation (TEST-NET-3)
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(prefix, bits, "ipv4");
}
for (const [prefix, bits] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed privately)
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo, which embeds an IPv4
  ["2001:2::", 48], // benchmarking
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation (RFC 9637)
  ["ff00::", 8], // multicast
  ["::", 96], // IPv4-compatible (deprecated), ::a.b.c.d
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT)
  ["64:ff9b::", 96], // NAT64 of any IPv4, private ones included
  ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215)
  ["2002::", 16], // 6to4, which embeds any IPv4
] as const) {
  blocked.addSubnet(prefix, bits, "ipv6");
}

/** Whether an address is private, loopback, link-local or otherwise not a public receiver. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, "ipv4");
  const family = net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : undefined;
  return family === undefined || blocked.check(address, family);
}

export class RefusedTarget extends Error {}

/** The addresses of a host (a literal address is its own), all of them. */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (net.isIP(bare)) return [bare];
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(bare, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
  );
  return addresses.map((a) => a.address);
}

/** Throws RefusedTarget when any address of the host is private (unless allowed). */
export async function checkHost(host: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const addresses = await resolveHost(host);
  const refused = addresses.filter(isPrivateAddress);
  if (refused.length > 0 || addresses.length === 0) {
    throw new RefusedTarget(
      `${host} resolves to ${refused.join(", ") || "nothing"}: a private, loopback or link-local address, allowed when the server runs with WEBHOOKS_ALLOW_PRIVATE=true (in .env, then restart it)`,
    );
  }
}

/**
 * A `lookup` for http.request that refuses private addresses at connect
 * time: the address connected to is the one checked.
 */
export function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses;
      const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new RefusedTarget(`${hostname} resolves to ${bad.address}: a private, loopback or link-local address`), "", 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
