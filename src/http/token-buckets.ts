/** A rate: `count` requests per `perMs` milliseconds, with bursts of up to `count`. */
export interface Rate {
  count: number;
  perMs: number;
}

const PERIODS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** `N/s`, `N/m` or `N/h` (N ≥ 1); `0` for no limit (undefined). Throws a message when malformed. */
export function parseRate(raw: string): Rate | undefined {
  if (raw === '0') return undefined;
  const m = /^(\d+)\/([smh])$/.exec(raw);
  if (!m || Number(m[1]) < 1) throw new Error(`must be a rate such as 100/s, 6000/m or 10000/h, or 0 for none; got ${JSON.stringify(raw)}`);
  return { count: Number(m[1]), perMs: PERIODS_MS[m[2]!]! };
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key (a key, a client address), each holding up to `count` tokens and
 * refilled at `count` per `perMs`. Cheap on the hot path: one map lookup and a little arithmetic,
 * one small object per new key. At most `maxKeys` are kept; beyond that the oldest key is
 * forgotten (it starts again with a full bucket).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMsRate: number;

  constructor(
    readonly rate: Rate,
    private readonly maxKeys: number,
  ) {
    this.perMsRate = rate.count / rate.perMs;
  }

  /** Takes a token for `key`: 0 when it had one, else the milliseconds until it will. */
  take(key: string, now: number): number {
    const bucket = this.refilled(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.perMsRate);
  }

  /** Takes `amount` tokens from `key`, into debt if need be (for a cost known only afterwards). */
  charge(key: string, amount: number, now: number): void {
    this.refilled(key, now).tokens -= amount;
  }

  /** Milliseconds until `key` has a token again (0: it has one now), taking none. */
  wait(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.rate.count, bucket.tokens + (now - bucket.at) * this.perMsRate);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.perMsRate);
  }

  private refilled(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = { tokens: this.rate.count, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.rate.count, bucket.tokens + (now - bucket.at) * this.perMsRate);
    bucket.at = now;
    return bucket;
  }
}
