import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** What each range that is not the public internet is, in a refusal's words (ipaddr.js's range names). */
const INTERNAL_RANGES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved address',
};

/** The IPv4 address inside an IPv6 one that carries it: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray();
  switch (address.range()) {
    case 'ipv4Mapped':
      return address.toIPv4Address();
    case 'rfc6052':
      return new ipaddr.IPv4(bytes.slice(12, 16));
    case '6to4':
      return new ipaddr.IPv4(bytes.slice(2, 6));
    default:
      return undefined;
  }
}

/**
 * Why `address` is not on the public internet (loopback, private, link-local, carrier-grade NAT,
 * multicast, unspecified, reserved, in either family), or undefined when it is. An IPv6 address
 * that carries an IPv4 one is judged by that one, as the network would route it.
 */
export function internalRange(address: IpAddress): string | undefined {
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner) return internalRange(inner);
  }
  const range = address.range();
  if (range === 'unicast') return undefined;
  return INTERNAL_RANGES[range] ?? `an address of the ${range} range`;
}

/** The address written in `text` (any form ipaddr.js reads), or undefined when it is not one. */
export function parseAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : undefined;
}

/** Address ranges in CIDR form; an address alone stands for itself. */
export class CidrList {
  private readonly ranges: Array<[IpAddress, number]>;

  /** Throws, naming the entry, when one is neither a CIDR nor an address. */
  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      if (entry.includes('/')) {
        try {
          return ipaddr.parseCIDR(entry);
        } catch {
          throw new Error(`${JSON.stringify(entry)} is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
        }
      }
      const address = parseAddress(entry);
      if (!address) throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    });
  }

  get size(): number {
    return this.ranges.length;
  }

  /** Whether `address` is in one of the ranges; an IPv4-mapped IPv6 address counts as its IPv4 address. */
  contains(address: IpAddress): boolean {
    const plain = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
    return this.ranges.some(([base, bits]) => base.kind() === plain.kind() && plain.match(base, bits));
  }
}
