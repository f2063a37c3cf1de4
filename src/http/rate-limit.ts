import { Elysia } from 'elysia';
import type { CidrList } from '../net/address-ranges';
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
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES). */
  trustedProxies: CidrList;
  /** Told of each request refused, by the limit that refused it (for metrics). */
  onLimited?: (limit: LimitName) => void;
}

/** Keys and addresses remembered per limit, at most; beyond it the oldest is forgotten. */
const MAX_TRACKED = 100_000;

/** Sending events: `POST /events` and Segment's `/v1/*`; every other route is a read (or management). */
function isCollection(request: Request): boolean {
  if (request.method !== 'POST') return false;
  const path = pathOf(request.url);
  return path === '/events' || path.startsWith('/v1/');
}

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
 */
export function rateLimit(options: RateLimitOptions) {
  const buckets = (rate: Rate | undefined) => (rate ? new TokenBuckets(rate, MAX_TRACKED) : undefined);
  const { limits } = options;
  const collectPerKey = buckets(limits.collectPerKey);
  const collectPerAddress = buckets(limits.collectPerAddress);
  const readPerKey = buckets(limits.readPerKey);
  const readPerAddress = buckets(limits.readPerAddress);
  const authFailures = buckets(limits.authFailuresPerAddress);
  const addresses = new WeakMap<Request, string>();
  const refuse = (limit: LimitName, what: string, rate: Rate, waitMs: number) => {
    options.onLimited?.(limit);
    return tooMany(what, rate, waitMs);
  };

  return new Elysia({ name: 'rate-limit' })
    .onRequest(({ request, server }) => {
      const address = addressKey(clientAddress(request, server, options.trustedProxies));
      addresses.set(request, address);
      const now = performance.now();
      if (authFailures) {
        const wait = authFailures.wait(address, now);
        if (wait > 0) throw refuse('auth_failures_per_address', 'too many requests with a missing or wrong key from this address', authFailures.rate, wait);
      }
      const collection = isCollection(request);
      const perAddress = collection ? collectPerAddress : readPerAddress;
      if (!perAddress) return;
      const wait = perAddress.take(address, now);
      if (wait > 0) throw refuse(collection ? 'collect_per_address' : 'read_per_address', 'too many requests from this address', perAddress.rate, wait);
    })
    .onBeforeHandle({ as: 'global' }, ({ request }) => {
      const principal = principalOf(request);
      if (!principal) return;
      const collection = isCollection(request);
      const perKey = collection ? collectPerKey : readPerKey;
      if (!perKey) return;
      const wait = perKey.take(`${principal.kind}:${principal.workspace.workspaceId}`, performance.now());
      if (wait > 0) throw refuse(collection ? 'collect_per_key' : 'read_per_key', `too many requests with this ${principal.kind} key`, perKey.rate, wait);
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
      if (!authFailures || answeredStatus(set, responseValue) !== 401) return;
      const address = addresses.get(request);
      if (address !== undefined) authFailures.take(address, performance.now());
    });
}
