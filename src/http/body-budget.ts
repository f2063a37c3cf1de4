import { Elysia } from 'elysia';
import { RETRY_AFTER_SECONDS, unavailable } from './problem';

export interface BodyBudgetOptions {
  /** The largest body (MAX_BODY_BYTES): what a body of unknown size may turn out to be. */
  maxBodyBytes: number;
  /** How long a request may wait for room before it gets 503. */
  maxWaitMs: number;
  /** Told of each request refused for want of room (for metrics). */
  onShed?: () => void;
}

interface Waiter {
  bytes: number;
  grant(): void;
}

/**
 * A budget of bytes shared by every request, granted first come, first served. One request
 * larger than the whole budget still runs, alone.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly capacity: number) {}

  /** Bytes granted and not yet given back. */
  get inUse(): number {
    return this.used;
  }

  /** Grants `bytes` at once if they fit and no one waits; else grants nothing. */
  tryAcquire(bytes: number): boolean {
    if (this.waiting.length > 0 || !this.fits(bytes)) return false;
    this.used += bytes;
    return true;
  }

  /** Resolves true once `bytes` are granted, or false after `maxWaitMs` without. */
  acquire(bytes: number, maxWaitMs: number): Promise<boolean> | true {
    if (this.tryAcquire(bytes)) return true;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
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

  release(bytes: number): void {
    this.used -= bytes;
    this.grantWaiting();
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.capacity;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
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
 * A global bound on request bodies in memory: a request with a body reserves its size before the
 * body is read and gives it back once answered (or when the client goes away). Requests that do
 * not fit wait, first come first served, and after `maxWaitMs` get 503 with Retry-After; while
 * they wait their bytes stay in the client and the socket, not in the process.
 */
export function bodyBudget(budget: ByteBudget, options: BodyBudgetOptions) {
  const reserved = new WeakMap<Request, number>();
  const release = (request: Request) => {
    const bytes = reserved.get(request);
    if (bytes === undefined) return;
    reserved.delete(request);
    budget.release(bytes);
  };
  return new Elysia({ name: 'body-budget' })
    .onRequest(async ({ request }) => {
      const bytes = bodyBytes(request, options.maxBodyBytes);
      if (bytes === 0) return;
      if (!(await budget.acquire(bytes, options.maxWaitMs))) {
        options.onShed?.();
        throw unavailable('too many request bodies are being processed; try again shortly', RETRY_AFTER_SECONDS);
      }
      reserved.set(request, bytes);
      request.signal.addEventListener('abort', () => release(request), { once: true });
    })
    .onAfterResponse({ as: 'global' }, ({ request }) => release(request));
}
