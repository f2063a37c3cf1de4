import type { Event } from '../events/model';
import { nowMicros, toEngineDateTime, type Micros } from '../timestamps';
import type { Logger } from '../log';
import type { MonotonicClock } from '../monotonic-clock';
import type { EgressPolicy } from '../net/egress-policy';
import type { Storage } from '../storage/storage';
import { compareCursors, matches, positionOf, readAfter, readByUuid } from './event-feed';
import type { Delivery } from './model';
import { deliveryId } from './payload';
import { retryDelay, type AttemptOutcome } from './retry-policy';
import { sendOnce, TIMEOUT } from './sender';
import type { Cursor, DeliveryRecord, WebhookRecord, WebhookRecords } from './webhook-records';

export interface DeliverySettings {
  timeoutMs: number;
  /** Waits before each retry, in milliseconds; after the last, the delivery has failed. */
  schedule: readonly number[];
  /** Retries that hold back later events; after them a delivery is retried beside the queue. */
  blockingRetries: number;
  /** Events per request when the webhook batches. */
  batchSize: number;
  /** Committed events held in memory; beyond it the actor reads them from the table. */
  bufferEvents: number;
  /** 0: events come straight from this process's ingestion. Otherwise read from the table once this old. */
  settleMs: number;
}

/** What one attempt came to: delivered, failed with a retry to come, or failed for good. */
export type AttemptVerdict = 'delivered' | 'retry' | 'failed';

export interface DeliveryDeps {
  storage: Storage;
  records: WebhookRecords;
  versions: MonotonicClock;
  log: Logger;
  /** Where deliveries may connect. */
  egress: EgressPolicy;
  /** parsedAt of the oldest event this process is still inserting: the table is complete below it. */
  frontier(): Micros | undefined;
  /** Told of each attempt's verdict (for metrics); not of one abandoned because the actor stops. */
  onAttempt?: (verdict: AttemptVerdict) => void;
  /**
   * Whether this process may send now (it holds the delivery lease), asked before every request;
   * when it may not, the actor stops at once without sending. Absent: always.
   */
  mayDeliver?: () => boolean;
  /** Awaited each time the cursor has moved, before the next send: the elected owner saves it there and then. */
  onCursorMoved?: (cursor: Cursor) => Promise<void>;
}

/** How often a settling actor looks at the table again when nothing woke it. */
const SETTLE_POLL_MS = 1000;

/** A delivery while it is being attempted. */
interface InFlight {
  record: DeliveryRecord;
  events: Event[];
}

/**
 * One webhook's delivery actor. It owns the webhook's place in the event stream (the cursor)
 * and sends the events it wants, in acceptance order, one request at a time:
 * - fed by `offer()` with events this process has just committed (an in-memory inbox, bounded;
 *   on overflow it drops the inbox and reads from the table instead, so memory stays bounded
 *   however long the receiver is down), or by reading the table after its cursor: at start,
 *   after an overflow, and always when several processes accept events (`settleMs`);
 * - a failing delivery is retried on the schedule, holding back later events for the first
 *   `blockingRetries` retries, then beside the queue from a durable record, until it succeeds
 *   or the schedule ends; a 4xx other than 408 and 429 fails at once;
 * - the cursor moves once a delivery succeeded, failed for good or was set aside (its record
 *   saved first), and the supervisor saves it, so after a crash events are sent again, never
 *   skipped.
 */
export class DeliveryActor {
  private inbox: Event[] = [];
  private backlog: Event[] = [];
  /** True while the inbox holds everything after the cursor, so the table need not be read. */
  private live = false;
  private overflowed = false;
  private current: InFlight | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(
    readonly target: WebhookRecord,
    readonly database: string,
    private cursor: Cursor,
    private readonly parked: DeliveryRecord[],
    private readonly settings: DeliverySettings,
    private readonly deps: DeliveryDeps,
  ) {
    this.done = this.run();
  }

  get uuid(): string {
    return this.target.webhook.uuid;
  }

  /** Events waiting in memory: the inbox and the page read from the table, each at most `bufferEvents` (or a batch). */
  get buffered(): number {
    return this.inbox.length + this.backlog.length;
  }

  /** Events just committed in this actor's workspace, in acceptance order. Never blocks. */
  offer(events: readonly Event[]): void {
    if (this.stopped) return;
    if (this.settings.settleMs === 0) {
      for (const event of events) {
        if (!matches(this.target.webhook, event)) continue;
        if (this.inbox.length >= this.settings.bufferEvents) {
          // The rest waits in the table; the actor reads it from there.
          this.inbox = [];
          this.live = false;
          this.overflowed = true;
          break;
        }
        this.inbox.push(event);
      }
    }
    this.wake?.();
  }

  /**
   * Drops the events waiting in memory that `erased` names (their subject's events are being
   * erased); events read from the table later are already gone from it. A delivery already
   * attempted keeps its events until it succeeds or fails.
   */
  discard(erased: (event: Event) => boolean): void {
    this.inbox = this.inbox.filter((e) => !erased(e));
    this.backlog = this.backlog.filter((e) => !erased(e));
  }

  /** Deliveries that failed and wait for a retry: the one holding the queue, and those set aside. */
  get retriesPending(): number {
    return this.parked.length + (this.currentDelivery() ? 1 : 0);
  }

  /** The last event dealt with, in acceptance order: what the supervisor saves. */
  get position(): Cursor {
    return this.cursor;
  }

  /** The delivery being retried while it holds the queue, if it has failed at least once. */
  currentDelivery(): Delivery | undefined {
    const c = this.current;
    if (!c || c.record.lastError === '') return undefined;
    return toDelivery(c.record, true);
  }

  /** Ends the actor: an attempt in flight is abandoned (and sent again after a restart). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wake?.();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.retryParkedDue();
        const batch = await this.nextBatch();
        if (batch.length > 0) await this.deliver(batch);
        else await this.idle();
      } catch (err) {
        // Storage trouble while reading or recording: wait, then carry on from the cursor.
        this.deps.log.warn('webhook delivery paused', { webhook: this.uuid, err });
        this.live = false;
        await this.pause(this.settings.schedule[0] ?? 1000);
      }
    }
  }

  /** The next events to send, in order: one, or up to a batch when the webhook batches. */
  private async nextBatch(): Promise<Event[]> {
    const size = this.target.webhook.enableBatching ? this.settings.batchSize : 1;
    if (this.backlog.length === 0 && !this.live) await this.readPage(Math.max(this.settings.bufferEvents, size));
    // Live (perhaps only since this read): what comes next is in the inbox.
    if (this.backlog.length === 0 && this.live) {
      this.backlog = this.inbox.filter((e) => compareCursors(positionOf(e), this.cursor) > 0);
      this.inbox = [];
    }
    return this.backlog.splice(0, size);
  }

  /**
   * Reads the next page after the cursor from the table. A short page means the table has
   * nothing more: from then on, unless the inbox overflowed meanwhile, the inbox has all that
   * comes next (events committed after this read are offered after it).
   */
  private async readPage(limit: number): Promise<void> {
    this.overflowed = false;
    this.backlog = await readAfter(this.deps.storage, this.database, this.target.webhook, this.cursor, this.horizon(), limit);
    if (this.backlog.length < limit && this.settings.settleMs === 0 && !this.overflowed) this.live = true;
  }

  /**
   * How far the table may be read: not into events this process is still inserting (a newer
   * batch can commit before an older one), nor, when several processes accept events, into
   * events younger than `settleMs` (another process may still be inserting older ones).
   */
  private horizon(): string | undefined {
    const bounds: Micros[] = [];
    const frontier = this.deps.frontier();
    if (frontier !== undefined) bounds.push(frontier - 1n);
    if (this.settings.settleMs > 0) bounds.push(nowMicros() - BigInt(this.settings.settleMs) * 1000n);
    if (bounds.length === 0) return undefined;
    return toEngineDateTime(bounds.reduce((a, b) => (a < b ? a : b)));
  }

  /** Sends a batch until it succeeds, fails for good, or is set aside; then moves the cursor past it. */
  private async deliver(events: Event[]): Promise<void> {
    const now = Date.now();
    const record: DeliveryRecord = {
      webhookUuid: this.uuid,
      id: deliveryId(events),
      eventUuids: events.map((e) => e.uuid),
      status: 'retrying',
      attempts: 0,
      lastStatusCode: 0,
      lastError: '',
      firstAttemptAt: now,
      lastAttemptAt: now,
      nextAttemptAt: 0,
    };
    this.current = { record, events };
    try {
      for (let retry = 0; ; retry++) {
        const outcome = await this.attempt(this.current);
        if (this.stopped) return;
        if (outcome.ok) break;
        if (this.givesUp(outcome, retry)) {
          await this.saveDelivery({ ...record, status: 'failed', nextAttemptAt: 0 });
          break;
        }
        const delay = retryDelay(this.settings.schedule, retry, outcome.retryAfterMs);
        if (retry >= this.settings.blockingRetries) {
          // Set aside: retried beside the queue from its record, so later events move on.
          const parked = { ...record, nextAttemptAt: Date.now() + delay };
          await this.saveDelivery(parked);
          this.parked.push(parked);
          break;
        }
        record.nextAttemptAt = Date.now() + delay;
        await this.pause(delay);
        if (this.stopped) return;
      }
      this.cursor = positionOf(events[events.length - 1]!);
      // Saved before the next send, so a new owner taking over resumes right after it.
      await this.deps.onCursorMoved?.(this.cursor);
    } finally {
      this.current = undefined;
    }
  }

  /** One retry of each delivery set aside whose time has come. */
  private async retryParkedDue(): Promise<void> {
    for (const record of [...this.parked]) {
      if (this.stopped || record.nextAttemptAt > Date.now()) continue;
      const events = await readByUuid(this.deps.storage, this.database, record.eventUuids);
      const finish = async (update: Partial<DeliveryRecord>) => {
        this.parked.splice(this.parked.indexOf(record), 1);
        await this.saveDelivery({ ...record, ...update });
      };
      if (events.length === 0) {
        await finish({ status: 'failed', lastError: 'its events no longer exist' });
        continue;
      }
      const outcome = await this.attempt({ record, events });
      if (this.stopped) return;
      const retry = record.attempts - 1;
      if (outcome.ok) await finish({ status: 'succeeded', nextAttemptAt: 0 });
      else if (this.givesUp(outcome, retry)) await finish({ status: 'failed', nextAttemptAt: 0 });
      else {
        record.nextAttemptAt = Date.now() + retryDelay(this.settings.schedule, retry, outcome.retryAfterMs);
        await this.saveDelivery(record);
      }
    }
  }

  private async attempt(delivery: InFlight): Promise<AttemptOutcome> {
    const { record, events } = delivery;
    if (this.deps.mayDeliver && !this.deps.mayDeliver()) {
      // The lease is gone: another process may own the deliveries now. Stop without sending;
      // the callers see the actor stopped and leave cursor and records as they are.
      this.stopped = true;
      this.abort.abort();
      this.wake?.();
      return { ok: false, retryable: true, statusCode: 0, error: 'not the delivery owner' };
    }
    record.attempts++;
    record.lastAttemptAt = Date.now();
    let details = '';
    const outcome = await sendOnce(
      { url: this.target.webhook.url, secret: this.target.secret, flatten: this.target.webhook.flatten },
      record.id,
      events,
      this.settings.timeoutMs,
      this.abort.signal,
      this.deps.egress,
      (text) => (details = text),
    );
    record.lastStatusCode = outcome.statusCode;
    record.lastError = outcome.ok ? '' : outcome.error;
    if (!outcome.ok && !this.stopped) {
      // The operator's log may say more than the caller's deliveries list: which address, why.
      this.deps.log.warn('webhook delivery failed', { webhook: this.uuid, delivery: record.id, attempt: record.attempts, error: outcome.error, details });
    }
    if (!this.stopped) this.deps.onAttempt?.(outcome.ok ? 'delivered' : this.givesUp(outcome, record.attempts - 1) ? 'failed' : 'retry');
    return outcome;
  }

  /** Whether a failed attempt ends its delivery: not worth repeating, or retry `retry` was the schedule's last. */
  private givesUp(outcome: Extract<AttemptOutcome, { ok: false }>, retry: number): boolean {
    return !outcome.retryable || retry >= this.settings.schedule.length;
  }

  private saveDelivery(record: DeliveryRecord): Promise<void> {
    return this.deps.records.saveDelivery(record, Number(this.deps.versions.next()));
  }

  /**
   * Waits for offered events, the next due retry beside the queue, or (when settling) the next
   * look at the table. An actor that is not live does not wait: what it has not read is in the
   * table, and an offer made while it was reading may not have found it asleep.
   */
  private idle(): Promise<void> {
    if ((!this.live && this.settings.settleMs === 0) || (this.live && this.inbox.length > 0)) return Promise.resolve();
    const due = this.parked.length > 0 ? Math.max(0, Math.min(...this.parked.map((p) => p.nextAttemptAt)) - Date.now()) : undefined;
    const poll = this.settings.settleMs > 0 ? Math.min(this.settings.settleMs, SETTLE_POLL_MS) : undefined;
    const waits = [due, poll].filter((v): v is number => v !== undefined);
    return new Promise((resolve) => {
      const timer = waits.length > 0 ? setTimeout(done, Math.min(...waits)) : undefined;
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      if (this.stopped) return done();
      this.wake = done;
    });
  }

  /** Waits `ms`, or less when the actor stops; offers do not cut it short (a retry's backoff). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const timer = setTimeout(done, ms);
      const signal = this.abort.signal;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done);
    });
  }
}

/**
 * The error a caller may see: the short class recorded since the egress policy came, or, for a
 * record written before (which kept the start of the receiver's answer), the class it amounts to.
 */
function errorClassOf(record: DeliveryRecord): string {
  if (!record.lastError.startsWith('HTTP ') && !record.lastError.startsWith('request failed') && !record.lastError.startsWith('no answer')) return record.lastError;
  if (record.lastStatusCode) return `status ${record.lastStatusCode}`;
  return record.lastError.startsWith('no answer') ? TIMEOUT : 'connection failed';
}

/** A delivery record as the API shows it. */
export function toDelivery(record: DeliveryRecord, holdsQueue: boolean): Delivery {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: record.id,
    status: record.status,
    eventUuids: record.eventUuids,
    attempts: record.attempts,
    lastStatusCode: record.lastStatusCode || null,
    lastError: errorClassOf(record),
    firstAttemptAt: iso(record.firstAttemptAt),
    lastAttemptAt: iso(record.lastAttemptAt),
    nextAttemptAt: record.nextAttemptAt ? iso(record.nextAttemptAt) : null,
    holdsQueue,
  };
}
