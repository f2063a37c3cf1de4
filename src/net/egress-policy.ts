import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { CidrList, internalRange, parseAddress, type IpAddress } from './address-ranges';
import type { HostResolver } from './host-resolver';

/** A connection refused by the egress policy: the address it would reach is internal. */
export class EgressBlockedError extends Error {
  override readonly name = 'EgressBlockedError';
}

/** What an operator opens despite the policy: address ranges, and host names (`*.` for every subdomain). */
export interface EgressAllowlist {
  addresses: CidrList;
  names: readonly string[];
}

const HOST_NAME = /^(?:\*\.)?[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;

/** `EGRESS_ALLOWLIST`: comma-separated CIDR ranges, addresses and host names. Throws naming a bad entry. */
export function parseAllowlist(raw: string): EgressAllowlist {
  const entries = raw.split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  const names: string[] = [];
  const ranges: string[] = [];
  for (const entry of entries) {
    if (entry.includes('/') || parseAddress(entry)) ranges.push(entry);
    else if (HOST_NAME.test(entry)) names.push(entry);
    else throw new Error(`${JSON.stringify(entry)} is neither a CIDR range, an IP address nor a host name`);
  }
  return { addresses: new CidrList(ranges), names };
}

/** Names that mean this machine (RFC 6761) or a cloud's metadata service, whatever a resolver says. */
const INTERNAL_NAMES = /^(?:localhost|.+\.localhost|metadata\.google\.internal)$/;

/** How long registration waits for a name to resolve before leaving the check to connection time. */
const REGISTRATION_RESOLVE_MS = 2000;

/**
 * Said after every internal target refused at registration: whoever registers a webhook for a
 * receiver on this machine or network learns which setting opens it (and that it is the
 * operator's, not the API's).
 */
const ALLOWLIST_HINT = ": internal addresses are refused unless the service's EGRESS_ALLOWLIST setting lists them";

/** A URL's host as a name or address: lower case, without IPv6 brackets or a final dot. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Where outbound connections that users choose (webhooks) may go: never to loopback, private,
 * link-local (cloud metadata), carrier-grade NAT, multicast, unspecified or reserved addresses,
 * whichever way they are written, unless the operator's allowlist opens them. Checked when a
 * target is registered (`refusal`) and again on every connection, against the very addresses
 * the connection will use (`lookup`, given to node:http), so a name that resolves elsewhere
 * later (DNS rebinding) is still caught.
 */
export class EgressPolicy {
  constructor(
    private readonly allow: EgressAllowlist,
    private readonly resolver: HostResolver,
  ) {}

  /** Why `url` may not be a target, checked when it is registered; undefined when it may. */
  async refusal(url: URL): Promise<string | undefined> {
    if (url.username !== '' || url.password !== '') {
      return 'must not carry a user name or password: receivers authenticate deliveries by their signature';
    }
    const internal = await this.internalTarget(hostOf(url));
    return internal && `${internal}${ALLOWLIST_HINT}`;
  }

  /** What internal address or name `host` is or resolves to now, if any the allowlist does not open. */
  private async internalTarget(host: string): Promise<string | undefined> {
    const now = this.hostRefusal(host);
    if (now !== undefined || this.nameAllowed(host) || parseAddress(host)) return now;
    let addresses: string[];
    try {
      addresses = await withTimeout(this.resolver.resolve(host), REGISTRATION_RESOLVE_MS);
    } catch {
      // Not resolvable now (perhaps not yet): every connection checks it again.
      return undefined;
    }
    for (const address of addresses) {
      const refused = this.addressRefusal(address);
      if (refused) return `${host} resolves to ${refused}`;
    }
    return undefined;
  }

  /**
   * Why a connection to `host` is refused before any lookup: an internal address written in the
   * URL, or a name that always means this machine. Names are checked again by `lookup`.
   */
  hostRefusal(host: string): string | undefined {
    if (this.nameAllowed(host)) return undefined;
    if (parseAddress(host)) return this.addressRefusal(host);
    if (INTERNAL_NAMES.test(host)) return `${host}, a name of this machine or of the cloud's metadata service`;
    return undefined;
  }

  /**
   * The `lookup` of node:http and node:net: resolves with the policy's resolver and answers the
   * addresses only when every one may be reached (else an EgressBlockedError), so the
   * connection dials exactly what was checked, with the original Host header and TLS name.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    const done = callback as (err: Error | null, address: string | LookupAddress[], family?: number) => void;
    this.checkedAddresses(host).then(
      (addresses) => {
        if (options.all) done(null, addresses);
        else done(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: Error) => done(err, options.all ? [] : ''),
    );
  };

  private async checkedAddresses(host: string): Promise<LookupAddress[]> {
    const early = this.hostRefusal(host);
    if (early) throw new EgressBlockedError(`blocked address: ${early}`);
    const addresses = await this.resolver.resolve(host);
    if (addresses.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
    if (!this.nameAllowed(host)) {
      for (const address of addresses) {
        const refused = this.addressRefusal(address);
        if (refused) throw new EgressBlockedError(`blocked address: ${host} resolves to ${refused}`);
      }
    }
    return addresses.map((address) => ({ address, family: parseAddress(address)!.kind() === 'ipv4' ? 4 : 6 }));
  }

  private addressRefusal(text: string): string | undefined {
    const address: IpAddress | undefined = parseAddress(text);
    if (!address) return `${text}, which is not an IP address`;
    if (this.allow.addresses.contains(address)) return undefined;
    const range = internalRange(address);
    return range && `${text}, ${range}`;
  }

  private nameAllowed(host: string): boolean {
    return this.allow.names.some((name) => (name.startsWith('*.') ? host.endsWith(name.slice(1)) : host === name));
  }
}
