import { Elysia } from 'elysia';
import type { CidrList } from '../net/address-ranges';
import type { Server } from 'elysia/universal';
import type { Principal } from '../workspaces/workspace-store';
import { principalOf } from './auth';
import { addressKey, clientAddress } from './client-address';
import { HttpProblem } from './problem';
import { answeredStatus } from './request-log';
import { TokenBuckets, type Rate } from './token-buckets';
import { pathOf } from './url-path';

/** The limits, each a rate or undefined for none. */
export interface RateLimits {
  collectPerKey?: Rate;
  collectPerAddress?: Rate;
  readPerKey?: Rate;
  readPerAddress?: Rate;
  authFailuresPerAddress?: Rate;
}

/** Which limit refused a request, as `/metrics` labels it. */
export type LimitName = 'collect_per_key' | 'collect_per_address' | 'read_per_key' | 'read_per_address' | 'auth_failures_per_address';

export interface RateLimitOptions {
  limits: RateLimits;
  /** Paths whose POST sends events: they count against the collection limits. */
  collectionPaths: ReadonlySet<string>;
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES). */
  trustedProxies: CidrList;
  /** Told of each request refused, by the limit that refused it (for metrics). */
  onLimited?: (limit: LimitName) => void;
}

/** Keys and addresses remembered per limit, at most; beyond it the oldest is forgotten. */
const MAX_TRACKED = 100_000;

/** 429 with Retry-After and the RateLimit fields of the IETF draft (draft-ietf-httpapi-ratelimit-headers). */
function tooMany(what: string, rate: Rate, waitMs: number): HttpProblem {
  const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return new HttpProblem(429, 'Too Many Requests', `${what}: at most ${rate.count} per ${rate.perMs / 1000} s; try again in ${seconds} s`, {
    headers: {
      'retry-after': seconds,
      'ratelimit-limit': String(rate.count),
      'ratelimit-remaining': '0',
      'ratelimit-reset': seconds,
      'ratelimit-policy': `${rate.count};w=${rate.perMs / 1000}`,
    },
  });
}

/**
 * Token-bucket rate limits: per client address as a request arrives (before its body is read),
 * per key once the key is known, and per address for failed authentication (an address that
 * used up its failures is refused before any key check, so keys cannot be guessed at speed).
 * Collection and reads have limits of their own, so a flood of one does not starve the other.
 * The plugin (`rateLimit`) applies it to every route; the collection fast path calls it itself.
 */
export class RateLimiter {
  private readonly collectPerKey: TokenBuckets | undefined;
  private readonly collectPerAddress: TokenBuckets | undefined;
  private readonly readPerKey: TokenBuckets | undefined;
  private readonly readPerAddress: TokenBuckets | undefined;
  private readonly authFailures: TokenBuckets | undefined;
  private readonly addresses = new WeakMap<Request, string>();

  constructor(private readonly options: RateLimitOptions) {
    const buckets = (rate: Rate | undefined) => (rate ? new TokenBuckets(rate, MAX_TRACKED) : undefined);
    this.collectPerKey = buckets(options.limits.collectPerKey);
    this.collectPerAddress = buckets(options.limits.collectPerAddress);
    this.readPerKey = buckets(options.limits.readPerKey);
    this.readPerAddress = buckets(options.limits.readPerAddress);
    this.authFailures = buckets(options.limits.authFailuresPerAddress);
  }

  /** Sending events (`POST` to a collection path); every other route is a read (or management). */
  isCollection(request: Request): boolean {
    return request.method === 'POST' && this.options.collectionPaths.has(pathOf(request.url));
  }

  /** On arrival: throws 429 when the client's address has used up its requests or its failed keys. */
  admitAddress(request: Request, server: Server | null): void {
    const address = addressKey(clientAddress(request, server, this.options.trustedProxies));
    this.addresses.set(request, address);
    const now = performance.now();
    if (this.authFailures) {
      const wait = this.authFailures.wait(address, now);
      if (wait > 0) throw this.refuse('auth_failures_per_address', 'too many requests with a missing or wrong key from this address', this.authFailures.rate, wait);
    }
    const collection = this.isCollection(request);
    const perAddress = collection ? this.collectPerAddress : this.readPerAddress;
    if (!perAddress) return;
    const wait = perAddress.take(address, now);
    if (wait > 0) throw this.refuse(collection ? 'collect_per_address' : 'read_per_address', 'too many requests from this address', perAddress.rate, wait);
  }

  /** Once the caller is known: throws 429 when its key has used up its requests. */
  admitKey(request: Request, principal: Principal): void {
    const collection = this.isCollection(request);
    const perKey = collection ? this.collectPerKey : this.readPerKey;
    if (!perKey) return;
    const wait = perKey.take(`${principal.kind}:${principal.workspace.workspaceId}`, performance.now());
    if (wait > 0) throw this.refuse(collection ? 'collect_per_key' : 'read_per_key', `too many requests with this ${principal.kind} key`, perKey.rate, wait);
  }

  /**
   * For the collection fast path: takes the request's tokens (per address and per key) when no
   * limit would refuse it, and answers whether it did; a request refused here is left to the
   * plugin, which refuses and counts it. Its address is not kept for `answered`: a request the
   * fast path answers had a valid key, and one it hands on is admitted by the plugin afresh.
   */
  admitCollection(request: Request, server: Server | null, principal: Principal): boolean {
    const address = addressKey(clientAddress(request, server, this.options.trustedProxies));
    const key = `${principal.kind}:${principal.workspace.workspaceId}`;
    const now = performance.now();
    if (this.authFailures && this.authFailures.wait(address, now) > 0) return false;
    if (this.collectPerAddress && this.collectPerAddress.wait(address, now) > 0) return false;
    if (this.collectPerKey && this.collectPerKey.wait(key, now) > 0) return false;
    this.collectPerAddress?.take(address, now);
    this.collectPerKey?.take(key, now);
    return true;
  }

  /** After the answer: a 401 counts against the address's failed keys. */
  answered(request: Request, status: number): void {
    if (!this.authFailures || status !== 401) return;
    const address = this.addresses.get(request);
    if (address !== undefined) this.authFailures.take(address, performance.now());
  }

  private refuse(limit: LimitName, what: string, rate: Rate, waitMs: number): HttpProblem {
    this.options.onLimited?.(limit);
    return tooMany(what, rate, waitMs);
  }
}

/** The limiter as hooks of every route. */
export function rateLimit(limiter: RateLimiter) {
  return new Elysia({ name: 'rate-limit' })
    .onRequest(({ request, server }) => limiter.admitAddress(request, server))
    .onBeforeHandle({ as: 'global' }, ({ request }) => {
      const principal = principalOf(request);
      if (principal) limiter.admitKey(request, principal);
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => limiter.answered(request, answeredStatus(set, responseValue)));
}
