import { Elysia } from 'elysia';
import type { Server } from 'elysia/universal';
import type { CidrList } from '../net/address-ranges';
import { addressKey, clientAddress } from './client-address';
import { bodyHandedOn, unreadBody } from './json-body';
import { RETRY_AFTER_SECONDS, unavailable } from './problem';

export interface BodyBudgetOptions {
  /** The largest body (MAX_BODY_BYTES): what a body of unknown size may turn out to be. */
  maxBodyBytes: number;
  /** How long a request may wait for room before it gets 503. */
  maxWaitMs: number;
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES): a share is the client's. */
  trustedProxies: CidrList;
  /** Told of each request refused for want of room (for metrics). */
  onShed?: () => void;
}

interface Waiter {
  bytes: number;
  owner: string;
  grant(): void;
}

/**
 * A budget of bytes shared by every request, granted first come, first served among the requests
 * whose owner (their client's address) holds less than its share: a request beyond its owner's
 * share waits without holding up anyone else's. One request larger than the whole budget, or than
 * a share, still runs, alone.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];
  private readonly held = new Map<string, number>();

  /** `share`: what one owner may hold at once (MAX_BODY_BYTES_PER_ADDRESS). */
  constructor(
    private readonly capacity: number,
    private readonly share: number = capacity,
  ) {}

  /** Bytes granted and not yet given back. */
  get inUse(): number {
    return this.used;
  }

  /** Grants `bytes` at once if they fit and no one who may go first waits; else grants nothing. */
  tryAcquire(bytes: number, owner = ''): boolean {
    if (!this.fits(bytes) || !this.withinShare(owner, bytes) || this.waiting.some((w) => this.withinShare(w.owner, w.bytes))) return false;
    this.take(bytes, owner);
    return true;
  }

  /** Resolves true once `bytes` are granted, or false after `maxWaitMs` without. */
  acquire(bytes: number, maxWaitMs: number, owner = ''): Promise<boolean> | true {
    if (this.tryAcquire(bytes, owner)) return true;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
        owner,
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        resolve(false);
        this.grantWaiting();
      }, maxWaitMs);
      this.waiting.push(waiter);
    });
  }

  release(bytes: number, owner = ''): void {
    this.used -= bytes;
    const left = (this.held.get(owner) ?? 0) - bytes;
    if (left > 0) this.held.set(owner, left);
    else this.held.delete(owner);
    this.grantWaiting();
  }

  private take(bytes: number, owner: string): void {
    this.used += bytes;
    this.held.set(owner, (this.held.get(owner) ?? 0) + bytes);
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.capacity;
  }

  private withinShare(owner: string, bytes: number): boolean {
    const held = this.held.get(owner) ?? 0;
    return held === 0 || held + bytes <= this.share;
  }

  private grantWaiting(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const next = this.waiting[i]!;
      if (!this.withinShare(next.owner, next.bytes)) {
        i++;
        continue;
      }
      if (!this.fits(next.bytes)) return;
      this.waiting.splice(i, 1);
      this.take(next.bytes, next.owner);
      next.grant();
    }
  }
}

/**
 * What a request's body may come to in memory: its Content-Length, or the largest body allowed
 * when the length is unknown (chunked) or the body is compressed (it is inflated to at most
 * that). 0 for a request without a body.
 */
function bodyBytes(request: Request, maxBodyBytes: number): number {
  const length = request.headers.get('content-length');
  const encoded = request.headers.get('content-encoding');
  if (length === null) return request.headers.has('transfer-encoding') ? maxBodyBytes : 0;
  if (encoded !== null && encoded !== 'identity') return maxBodyBytes;
  return Math.min(Number(length) || 0, maxBodyBytes);
}

/**
 * The reservations of request bodies in the budget: made just before a body is read (once the
 * route is known and a key it carries checked), given back once the request is answered or its
 * client went away.
 */
export class BodyReservations {
  private readonly reserved = new WeakMap<Request, { bytes: number; owner: string }>();

  constructor(
    private readonly budget: ByteBudget,
    private readonly options: BodyBudgetOptions,
  ) {}

  /**
   * Reserves the body's bytes for its client's address; requests that do not fit wait, and after
   * `maxWaitMs` get 503 with Retry-After. While they wait their bytes stay in the client and the
   * socket, not in the process.
   */
  async reserve(request: Request, server: Server | null): Promise<void> {
    const bytes = bodyBytes(request, this.options.maxBodyBytes);
    if (bytes === 0 || this.reserved.has(request)) return;
    const owner = addressKey(clientAddress(request, server, this.options.trustedProxies));
    if (!(await this.budget.acquire(bytes, this.options.maxWaitMs, owner))) {
      this.options.onShed?.();
      throw unavailable('too many request bodies are being processed; try again shortly', RETRY_AFTER_SECONDS);
    }
    this.reserved.set(request, { bytes, owner });
    request.signal.addEventListener('abort', () => this.release(request), { once: true });
  }

  release(request: Request): void {
    const held = this.reserved.get(request);
    if (held === undefined) return;
    this.reserved.delete(request);
    this.budget.release(held.bytes, held.owner);
  }
}

/**
 * A global bound on request bodies in memory, as hooks: before a body is read (Elysia parses only
 * the body of a route that exists) the caller's key is checked, and a request no route would take
 * is answered by its route without its body being read (on a connection then closed); the others
 * reserve their body's bytes (`BodyReservations`), given back once answered.
 */
export function bodyBudget(reservations: BodyReservations, mayHoldBody: (request: Request) => boolean) {
  return new Elysia({ name: 'body-budget' })
    .onParse({ as: 'global' }, async ({ request, server, set, contentType }) => {
      // Read before the app saw it, under its reader's reservation.
      if (bodyHandedOn(request)) return;
      if (!mayHoldBody(request)) {
        // The route's own key check refuses it, in the route's own words; the body is never read.
        set.headers.connection = 'close';
        return unreadBody(request, contentType ?? '');
      }
      await reservations.reserve(request, server);
    })
    .onAfterResponse({ as: 'global' }, ({ request }) => reservations.release(request));
}
