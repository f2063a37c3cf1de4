import { nowMicros, type Micros } from './timestamps';

/**
 * Wall-clock microseconds that only go forward: each call answers a later time than the one
 * before, even within one microsecond or after NTP steps the clock back. It gives accepted
 * events their `parsedAt` (so that order is acceptance order) and metadata rows their version.
 */
export class MonotonicClock {
  private last: Micros = 0n;

  next(): Micros {
    const now = nowMicros();
    this.last = now > this.last ? now : this.last + 1n;
    return this.last;
  }

  /** Never answer a time at or before `t` (one already on record). */
  advancePast(t: Micros): void {
    if (t > this.last) this.last = t;
  }
}
