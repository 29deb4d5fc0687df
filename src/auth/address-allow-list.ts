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
  if (mapped && prefix >= 96) return { address: mapped[1]!, prefix: prefix - 96, family: "ipv4" };
  return { address: address.toLowerCase(), prefix, family: version === 4 ? "ipv4" : "ipv6" };
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
