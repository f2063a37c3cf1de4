/** What one attempt at a delivery came to. */
export type AttemptOutcome =
  | { ok: true; statusCode: number }
  | {
      ok: false;
      /** Worth trying again: network errors, timeouts, 408, 429 and 5xx. */
      retryable: boolean;
      /** 0 when no HTTP answer came. */
      statusCode: number;
      error: string;
      /** The receiver's Retry-After, in milliseconds from now. */
      retryAfterMs?: number;
    };

/** ±10%: deliveries failing together do not all come back at the same moment. */
const JITTER = 0.1;
/** The longest a receiver's Retry-After may hold a delivery back. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Retry-After in seconds or as an HTTP date, in milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether an HTTP status means "try again later". */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * How long to wait before retry `retry` (0 for the first retry): the schedule's step with
 * jitter, or the receiver's Retry-After when that is longer (at most a day).
 */
export function retryDelay(schedule: readonly number[], retry: number, retryAfterMs: number | undefined, random = Math.random): number {
  const step = schedule[Math.min(retry, schedule.length - 1)]!;
  const jittered = step * (1 - JITTER + 2 * JITTER * random());
  return Math.round(Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
}
