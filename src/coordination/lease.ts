import type { Logger } from '../log';
import type { Storage } from '../storage/storage';
import { LeaseRecords, type LeaseState } from './lease-records';

export interface LeaseOptions {
  metaDatabase: string;
  /** Which lease (one row set per name). */
  name: string;
  /** How long a claim or renewal holds; renewed every third of it. */
  leaseMs: number;
  /** Metadata replicated over a cluster: quorum inserts, sequentially consistent reads. */
  cluster: boolean;
}

/**
 * Time a claim is given to become visible to every contender before its read-back decides the
 * term: a tiny insert commits within milliseconds, so two contenders that claim the same term
 * within this time both see both claims and agree on the earlier one.
 */
const CLAIM_SETTLE_FRACTION = 1 / 10;
/** Kept back from the lease's end: this process stops delivering this long before others may start. */
const SAFETY_FRACTION = 1 / 10;

/**
 * A lease held by one process of those sharing a ClickHouse server (the webhook delivery owner).
 *
 * - Claim: when the lease is free or expired (by the server's clock), insert a claim of the next
 *   term, wait for claims to settle, read back: the earliest claim of the highest term won, and
 *   every process reads the same. A winner starts only once every row of earlier terms it can
 *   see has expired, so an old holder's late renewal cannot overlap it.
 * - Renew every third of the lease; the read-back after each renewal must still show this
 *   process as the winner of the highest term, or it has lost.
 * - This process counts its lease from the moment it sent the renewal (before the server's own
 *   clock started it) minus a safety margin: it stops before anyone else may start, even when
 *   storage stops answering, since an unanswered renewal extends nothing.
 *
 * Takeover bound: a holder that dies at t renewed at most at t, so its lease ends by t + lease;
 * contenders look every third of the lease: another process holds it by t + 4/3 lease plus a
 * claim's settle time (1/10 lease) and a few round trips.
 */
export class Lease {
  readonly holderId = crypto.randomUUID();
  private readonly records: LeaseRecords;
  private term = 0;
  private claimedMicros = 0n;
  /** performance.now() until which this process may act as the holder; 0 when it does not hold. */
  private deadline = 0;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly listeners: Array<(held: boolean) => void> = [];

  constructor(
    storage: Storage,
    private readonly options: LeaseOptions,
    private readonly log: Logger,
  ) {
    this.records = new LeaseRecords(storage, options.metaDatabase, options.cluster);
  }

  /** Whether this process holds the lease now (checked before each act that only the holder may do). */
  holds(): boolean {
    return this.deadline > performance.now();
  }

  /** Told when this process gains or loses the lease. */
  onChange(listener: (held: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Tries once (awaited, so a lone process holds the lease when it starts), then every third of the lease. */
  async start(): Promise<void> {
    await this.tick();
    this.tickTimer = setInterval(() => void this.tick(), Math.max(1, Math.round(this.options.leaseMs / 3)));
    this.tickTimer.unref();
  }

  /** Stops trying; a held lease is released at once, so another process need not wait it out. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tickTimer);
    await this.running;
    if (!this.holds()) return;
    this.lose('stopping');
    await this.records
      .renew(this.options.name, this.term, this.holderId, this.claimedMicros, 0)
      .catch((err) => this.log.warn('lease not released; it expires by itself', { lease: this.options.name, err }));
  }

  private tick(): Promise<void> {
    // One attempt at a time: a slow server must not stack renewals.
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.attempt()
      .catch((err) => this.log.warn('lease attempt failed', { lease: this.options.name, err }))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async attempt(): Promise<void> {
    const { name, leaseMs } = this.options;
    const sentAt = performance.now();
    if (this.term > 0 && this.holds()) {
      await this.records.renew(name, this.term, this.holderId, this.claimedMicros, leaseMs);
      this.decide(await this.records.read(name), sentAt);
      return;
    }
    // Not holding (any more): a lapsed holder competes like everyone else, for a new term.
    if (this.deadline > 0) this.lose('its lease lapsed');
    const seen = await this.records.read(name);
    if (seen.holder === this.holderId && seen.expiresMs > seen.nowMs) {
      // Won, but was waiting for an earlier term to run out: renew and look again.
      this.term = seen.term;
      this.claimedMicros = seen.claimedMicros;
      await this.records.renew(name, this.term, this.holderId, this.claimedMicros, leaseMs);
      this.decide(await this.records.read(name), sentAt);
      return;
    }
    if (seen.holder !== undefined && seen.expiresMs > seen.nowMs) return;
    await this.records.claim(name, seen.term + 1, this.holderId, leaseMs);
    await new Promise((resolve) => setTimeout(resolve, Math.round(leaseMs * CLAIM_SETTLE_FRACTION)));
    const after = await this.records.read(name);
    if (after.holder === this.holderId) {
      this.term = after.term;
      this.claimedMicros = after.claimedMicros;
    }
    this.decide(after, sentAt);
  }

  /** Holds (until `sentAt` + lease - margin) when the read shows this process winning the highest term, with no earlier term live. */
  private decide(state: LeaseState, sentAt: number): void {
    const won = state.holder === this.holderId && state.term === this.term && state.olderExpiresMs <= state.nowMs;
    if (!won) {
      if (this.deadline > 0) this.lose(state.holder === this.holderId ? 'an earlier term is still live' : `term ${state.term} is held by ${state.holder}`);
      return;
    }
    // Lapsed while this renewal was under way: tell the listeners it was lost before it is held
    // again, so that whatever stopped at the lapse (a delivery actor) is started afresh.
    if (!this.holds() && this.deadline > 0) this.lose('its lease lapsed during a renewal');
    const was = this.holds();
    this.deadline = sentAt + this.options.leaseMs * (1 - SAFETY_FRACTION);
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => {
      if (!this.holds() && this.deadline > 0) this.lose('its lease ran out before a renewal');
    }, Math.max(0, this.deadline - performance.now()) + 1);
    this.deadlineTimer.unref();
    if (!was) {
      this.log.info('lease acquired', { lease: this.options.name, holder: this.holderId, term: this.term });
      for (const listener of this.listeners) listener(true);
    }
  }

  private lose(reason: string): void {
    const was = this.deadline > 0;
    this.deadline = 0;
    clearTimeout(this.deadlineTimer);
    if (!was) return;
    this.log.info('lease lost', { lease: this.options.name, holder: this.holderId, term: this.term, reason });
    for (const listener of this.listeners) listener(false);
  }
}
