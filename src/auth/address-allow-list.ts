import { BlockList, isIP } from "node:net";

/**
 * The client addresses an API user's key may be used from: IPv4 and IPv6
 * addresses and CIDR blocks, set by the operator (`user allow-ip`). A plain
 * address is a /32 or /128. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`,
 * what a dual-stack socket reports for an IPv4 client) are IPv4, on both the
 * rule side and the client side.
 */
export class AddressAllowList {
  private constructor(
    /** Canonical `address/prefix` entries, as stored and listed. */
    readonly entries: readonly string[],
    private readonly blocks: BlockList,
  ) {}

  /** Parses a comma-separated list; every bad entry is named. An empty list is a mistake, not "anywhere". */
  static parse(text: string): { list: AddressAllowList; problems: [] } | { list: undefined; problems: string[] } {
    const problems: string[] = [];
    const rules: Rule[] = [];
    const items = text.split(",").map((item) => item.trim());
    for (const item of items) {
      const rule = parseRule(item);
      if (typeof rule === "string") problems.push(rule);
      else rules.push(rule);
    }
    if (problems.length > 0) return { list: undefined, problems };
    const blocks = new BlockList();
    for (const r of rules) blocks.addSubnet(r.address, r.prefix, r.family);
    const entries = [...new Set(rules.map((r) => `${r.address}/${r.prefix}`))];
    return { list: new AddressAllowList(entries, blocks), problems: [] };
  }

  /** Allows no address: what a stored list that no longer parses means (fail closed). */
  static nowhere(): AddressAllowList {
    return new AddressAllowList([], new BlockList());
  }

  /** Whether the client at `address` (req.ip) may use the key. An unknown address may not. */
  allows(address: string | undefined): boolean {
    const client = address === undefined ? undefined : clientAddress(address);
    return client !== undefined && this.blocks.check(client.address, client.family);
  }

  toString(): string {
    return this.entries.join(",");
  }
}

interface Rule {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function parseRule(item: string): Rule | string {
  if (item === "") return "empty entry (a stray comma?)";
  const [address = "", prefixText, extra] = item.split("/");
  if (extra !== undefined) return `'${item}': expected an address or address/prefix`;
  const version = isIP(address);
  if (version === 0 || address.includes("%")) return `'${item}': '${address}' is not an IPv4 or IPv6 address`;
  const max = version === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
      return `'${item}': the prefix length must be 0 to ${max} for an IPv${version} address`;
    }
    prefix = Number(prefixText);
  }
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped && prefix >= 96) return { address: networkOf(mapped[1]!, prefix - 96, 4), prefix: prefix - 96, family: "ipv4" };
  return { address: networkOf(address, prefix, version as 4 | 6), prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * The block's own address, host bits cleared: `10.0.0.1/8` is stored and
 * listed as `10.0.0.0/8`, which is what it allows.
 */
function networkOf(address: string, prefix: number, version: 4 | 6): string {
  const bits = version === 4 ? 32 : 128;
  const value = version === 4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  const network = value & mask;
  return version === 4 ? bigIntToIpv4(network) : bigIntToIpv6(network);
}

function ipv4ToBigInt(address: string): bigint {
  return address.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function bigIntToIpv4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 255n)).join(".");
}

function ipv6ToBigInt(address: string): bigint {
  let text = address.toLowerCase();
  // A trailing dotted IPv4 part (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToBigInt(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** RFC 5952's form: lower case, leading zeros dropped, the longest run of zero groups as `::`. */
function bigIntToIpv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(":");
  return `${hex.slice(0, best.start).join(":")}::${hex.slice(best.start + best.length).join(":")}`;
}

/**
 * The text when it is an IP address (with at most an interface name as its IPv6 zone), else
 * undefined: what X-Forwarded-For said is the client's own text, of any length and content.
 */
export function ipAddressOrNothing(text: string): string | undefined {
  const zone = text.indexOf("%");
  if (zone >= 0 && !/^[A-Za-z0-9_.-]{1,15}$/.test(text.slice(zone + 1))) return undefined;
  return isIP(text) === 0 ? undefined : text;
}

function clientAddress(raw: string): { address: string; family: "ipv4" | "ipv6" } | undefined {
  const address = raw.replace(/%.*$/, "");
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped && isIP(mapped[1]!) === 4) return { address: mapped[1]!, family: "ipv4" };
  // Behind a trusted proxy req.ip is whatever X-Forwarded-For said: anything but an address is refused.
  const version = isIP(address);
  if (version === 0) return undefined;
  return { address, family: version === 4 ? "ipv4" : "ipv6" };
}
