import { Actor } from '../actors/actor';
import type { Logger } from '../log';
import { StorageOutcomeUnknownError, StorageQueryError, StorageUnavailableError, type Storage } from '../storage/storage';
import type { AcceptedEvent } from './event-rows';
import type { Event } from './model';
import type { Claim, RecentMessageIds } from './recent-message-ids';
import { parseIsoDateTime, type Micros } from '../timestamps';
import { invalidInput, OUTCOME_UNKNOWN_TYPE, RETRY_AFTER_SECONDS, unavailable, type AnswersAsProblem } from '../http/problem';

/** The buffer holds as many events as it may; the client should retry later (503 + Retry-After). */
export class IngestOverloadedError extends Error implements AnswersAsProblem {
  override readonly name = 'IngestOverloadedError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS);
}

/**
 * Storage did not confirm an insert (timed out, connection lost): its events may be stored or
 * not. The buffer repeats the insert (deduplicated) until it knows, but the requests in it have
 * been answered by then.
 */
export class IngestOutcomeUnknownError extends StorageUnavailableError implements AnswersAsProblem {
  override readonly name = 'IngestOutcomeUnknownError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS, OUTCOME_UNKNOWN_TYPE);
}

/** The engine refused a request's events, which validation let through (400: they will never be stored). */
export class IngestRefusedError extends Error implements AnswersAsProblem {
  override readonly name = 'IngestRefusedError';
  toProblem = () => invalidInput(this.message, []);
}

/** The buffer is closing for shutdown and accepts nothing new. */
export class IngestClosedError extends Error implements AnswersAsProblem {
  override readonly name = 'IngestClosedError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS);
}

export interface IngestBufferOptions {
  /** Hand a batch to the writer once this many rows wait, even while an insert is running. */
  flushRows: number;
  /**
   * The shortest time between the starts of two inserts. Each insert has a large fixed cost
   * (a new part, and the merges it causes), so under load rows wait up to this long to join a
   * bigger insert; a request after a quiet spell is inserted at once.
   */
  insertIntervalMs: number;
  /** Inserts in flight at once, each on a session of its own. */
  writers: number;
  /**
   * Rows waiting or being inserted, at most. A submission that does not fit is refused, and so
   * is every later one until the queue has drained to half: refusing is then cheap (before the
   * body is decoded) and the queue does not hover at full, refusing most requests after work.
   */
  maxQueuedRows: number;
  /**
   * Told of each committed insert, with its events in acceptance order, right after the promises
   * of the requests that sent them are resolved. Must not throw, and must be quick: it runs on
   * the ingest path.
   */
  onCommitted?: (database: string, events: readonly Event[]) => void;
  /** Recognises repeated messageIds: a repeat is acknowledged with its request, not inserted again. */
  messageIds: RecentMessageIds;
  /** Told of each committed insert: its rows and how long it took. Must not throw (for metrics). */
  onFlush?: (rows: number, seconds: number) => void;
  /** The check of a database's suppressed subjects (none: undefined): their events are acknowledged, never stored. */
  suppressionCheck?: (database: string) => ((event: Event) => boolean) | undefined;
  /** Told how many events of a submission were suppressed (for metrics). Must not throw. */
  onSuppressed?: (database: string, events: number) => void;
}

interface Submission {
  database: string;
  events: readonly AcceptedEvent[];
  /** With how many of its events were stored: the others repeated a stored messageId. */
  resolve(stored: number): void;
  reject(err: unknown): void;
}

/** Submissions handed to a writer together, numbered in acceptance order. */
interface Batch {
  seq: number;
  submissions: Submission[];
  rows: number;
  /** parsedAt of its first event: the oldest in the batch. */
  oldest: Micros;
  /** When its writer began inserting it. */
  startedAt?: number;
  /** Its writer is done with it (it may still wait for inserts of unknown outcome to be settled). */
  written?: boolean;
  /** Inserts of unknown outcome being repeated until they are known. */
  repeating: Array<Promise<void>>;
  /** What committed, per database, to be announced once every older batch has settled. */
  committed: Array<{ database: string; events: Event[] }>;
}

/** Batches queued for a writer besides the one it is inserting: one, so the next is ready. */
const WRITER_MAILBOX = 1;
/**
 * A second insert runs beside one in flight only for at most this many rows. Small inserts
 * mostly wait on the engine, so overlapping them helps; large ones are CPU-bound, so they run
 * one after another.
 */
const OVERLAP_MAX_ROWS = 500;
/** Weight of the latest insert in the running average of insert times. */
const INSERT_TIME_WEIGHT = 0.2;
/** Waits before repeating an insert of unknown outcome: doubling from the first to the most. */
const REPEAT_FIRST_MS = 250;
const REPEAT_MAX_MS = 10_000;
/** Characters of the engine's message quoted to a client whose events it refused. */
const MAX_REFUSAL_LENGTH = 500;

/**
 * Group commit for `POST /events`. Requests submit their rows and wait; submissions are gathered
 * into batches (one insert per database each) and handed to `writers` writer actors, each
 * running one insert at a time on a session of its own. A small insert mostly waits on the
 * engine, so small ones overlap (more single-event requests per second); large ones are
 * CPU-bound and run one after another. A batch is handed over when
 * `flushRows` rows wait, or when a writer is idle and the last batch started at least
 * `insertIntervalMs` ago: at once for a lone request after a quiet spell, in bigger and fewer
 * inserts under load. Each submission resolves only after the insert holding its rows has
 * committed; a request's rows are never split across inserts.
 *
 * Batches may commit out of order, so commits are announced in acceptance order (a batch that
 * finishes early waits for the older ones to settle), and `frontier()` tells readers of the
 * table how far it is complete.
 */
export class IngestBuffer {
  private pending: Submission[] = [];
  private pendingRows = 0;
  private queuedRows = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastHandOver = -Infinity;
  private closing = false;
  private shedding = false;
  private nextSeq = 0;
  private nextAnnounced = 0;
  /** Running average of how long an insert takes, in ms. */
  private insertMs = 0;
  /** Handed over, not settled; a Map keeps them in acceptance order. */
  private readonly inFlight = new Map<number, Batch>();
  /** Settled, waiting for an older batch before they are announced. */
  private readonly settled = new Map<number, Batch>();
  private readonly writers: Actor<Batch>[];
  /** Resolved by close(): wakes repeats of unknown inserts from their waits. */
  private readonly closed = Promise.withResolvers<void>();
  /** Submissions not yet committed or failed, for `whenSettled()`. */
  private readonly open = new Set<Promise<number>>();

  constructor(
    private readonly storage: Storage,
    private readonly options: IngestBufferOptions,
    private readonly log: Logger,
  ) {
    this.writers = Array.from({ length: options.writers }, () => new Actor((batch: Batch) => this.write(batch), WRITER_MAILBOX));
  }

  /** The most events one submission may hold: more never fit in the queue. */
  get capacity(): number {
    return this.options.maxQueuedRows;
  }

  /** Rows accepted but not yet committed. */
  get depth(): number {
    return this.queuedRows;
  }

  /**
   * The parsedAt of the oldest event handed to a writer and not yet committed or failed, if any:
   * events accepted before it are all settled, so the table is complete below it. (Events not
   * yet handed over are newer than every batch that has been.)
   */
  frontier(): Micros | undefined {
    for (const batch of this.inFlight.values()) return batch.oldest;
    return undefined;
  }

  /** Throws when submissions are being refused (shutdown, or a full queue not yet drained to half). */
  admit(): void {
    if (this.closing) throw new IngestClosedError('the service is shutting down');
    if (this.shedding) throw new IngestOverloadedError(`the ingest queue is full (${this.queuedRows} events waiting)`);
  }

  /** Resolves once every submission made before the call has been committed or has failed. */
  async whenSettled(): Promise<void> {
    await Promise.allSettled([...this.open]);
  }

  /**
   * Stores `events` in `database.events`, but those of suppressed subjects and repeats of a
   * stored messageId; resolves once they are committed, with how many were stored and how many
   * suppressed (the rest were repeats).
   */
  async submit(database: string, events: readonly AcceptedEvent[]): Promise<{ stored: number; suppressed: number }> {
    this.admit();
    if (this.queuedRows + events.length > this.options.maxQueuedRows) {
      // Shedding until the queue drains to half; a submission refused by a queue at most
      // half full is refused alone, or no drain would ever lift the shedding.
      this.shedding = this.queuedRows > this.options.maxQueuedRows / 2;
      throw new IngestOverloadedError(`the ingest queue is full (${this.queuedRows} events waiting, ${events.length} sent)`);
    }
    // Everything up to the first await runs at once, so submissions queue in call order.
    const kept = this.withoutSuppressed(database, events);
    const suppressed = events.length - kept.length;
    if (kept.length === 0) return { stored: 0, suppressed };
    const stored = new Promise<number>((resolve, reject) => {
      this.pending.push({ database, events: kept, resolve, reject });
      this.pendingRows += kept.length;
      this.queuedRows += kept.length;
      this.pump();
    });
    this.open.add(stored);
    const forget = () => void this.open.delete(stored);
    stored.then(forget, forget);
    return { stored: await stored, suppressed };
  }

  private withoutSuppressed(database: string, events: readonly AcceptedEvent[]): readonly AcceptedEvent[] {
    const suppressed = this.options.suppressionCheck?.(database);
    if (!suppressed) return events;
    const kept = events.filter((e) => !suppressed(e.event));
    if (kept.length < events.length) this.options.onSuppressed?.(database, events.length - kept.length);
    return kept;
  }

  /**
   * Refuses new submissions and resolves once everything accepted is committed or failed. An
   * insert of unknown outcome gets one more attempt; if that fails too, it is logged as unknown.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.closed.resolve();
    this.pump();
    // Each written batch pumps the next, so waiting for every writer to idle drains everything.
    while (this.pending.length > 0 || this.writers.some((w) => !w.idle)) await Promise.all(this.writers.map((w) => w.whenIdle()));
    await Promise.all([...this.inFlight.values()].flatMap((b) => b.repeating));
    await Promise.all(this.writers.map((w) => w.stop()));
  }

  private pump(): void {
    while (this.pending.length > 0 && (this.closing || this.pendingRows >= this.options.flushRows)) {
      // A full batch goes now: to an idle writer if none is busy, else queued behind a running insert.
      const busy = this.writers.filter((w) => !w.idle);
      const writer = busy.length === 0 ? this.writers[0]! : busy.find((w) => w.pending < WRITER_MAILBOX);
      if (!writer) return;
      this.handOver(writer);
    }
    if (this.pending.length === 0) return;
    // Otherwise a writer's completion pumps again.
    const writer = this.writers.find((w) => w.idle);
    if (!writer) return;
    let wait = this.lastHandOver + this.options.insertIntervalMs - performance.now();
    const running = [...this.inFlight.values()].filter((b) => b.startedAt !== undefined && !b.written);
    if (running.length > 0) {
      if (this.pendingRows > OVERLAP_MAX_ROWS) return;
      // Staggered: the overlapping insert starts halfway through the running one, so each
      // carries about half of what arrives, rather than a row or two each.
      const newest = Math.max(...running.map((b) => b.startedAt!));
      wait = Math.max(wait, newest + this.insertMs / 2 - performance.now());
    }
    if (wait <= 0) return this.handOver(writer);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, wait);
  }

  /** Moves up to `flushRows` rows (whole submissions, at least one) to `writer`. */
  private handOver(writer: Actor<Batch>): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.lastHandOver = performance.now();
    let take = 0;
    let rows = 0;
    while (take < this.pending.length && (take === 0 || rows + this.pending[take]!.events.length <= this.options.flushRows)) {
      rows += this.pending[take]!.events.length;
      take++;
    }
    const submissions = this.pending.splice(0, take);
    this.pendingRows -= rows;
    const oldest = parseIsoDateTime(submissions[0]!.events[0]!.event.parsedAt)!;
    const batch: Batch = { seq: this.nextSeq++, submissions, rows, oldest, repeating: [], committed: [] };
    this.inFlight.set(batch.seq, batch);
    writer.ask(batch).then(
      () => {
        if (batch.repeating.length === 0) return this.settle(batch);
        // Still in flight (holding the frontier) until its unknown inserts are known; the writer is free.
        void Promise.all(batch.repeating).then(() => this.settle(batch));
        this.pump();
      },
      (err) => {
        for (const s of submissions) s.reject(err);
        this.release(rows);
        this.settle(batch);
      },
    );
  }

  /** One insert per database in the batch; each submission learns its own insert's outcome. */
  private async write(batch: Batch): Promise<void> {
    batch.startedAt = performance.now();
    const byDatabase = new Map<string, Submission[]>();
    for (const s of batch.submissions) {
      const group = byDatabase.get(s.database);
      if (group) group.push(s);
      else byDatabase.set(s.database, [s]);
    }
    try {
      for (const [database, group] of byDatabase) await this.insertGroup(batch, database, group);
    } finally {
      batch.written = true;
    }
  }

  /**
   * One insert of the submissions of `group`, each learning its outcome; events repeating a
   * stored messageId are left out, and acknowledged with the rest. When the engine refuses the
   * rows as data, they are inserted again request by request, so that one request's events
   * (which validation let through) never fail the others': only the refused request gets a 400.
   * Any other failure (a full disk, too many parts) is the moment's, not the data's: 503.
   */
  private async insertGroup(batch: Batch, database: string, group: Submission[]): Promise<void> {
    const queued = group.reduce((n, s) => n + s.events.length, 0);
    const token = crypto.randomUUID();
    const started = performance.now();
    let claim: Claim | undefined;
    try {
      claim = await this.options.messageIds.claim(database, group.flatMap((s) => s.events));
      const rows = claim.fresh.map((e) => e.json);
      if (rows.length > 0) await this.storage.insert(database, 'events', rows, token);
      claim.settle(true);
      const ms = performance.now() - started;
      this.insertMs = this.insertMs === 0 ? ms : this.insertMs + INSERT_TIME_WEIGHT * (ms - this.insertMs);
      this.log.debug('ingest flush', { database, rows: rows.length, repeats: queued - rows.length, ms: Math.round(ms) });
      this.options.onFlush?.(rows.length, ms / 1000);
      // Each submission learns how many of its events were stored; only repeats make that fewer.
      if (rows.length === queued) for (const s of group) s.resolve(s.events.length);
      else {
        const fresh = new Set(claim.fresh);
        for (const s of group) s.resolve(s.events.filter((e) => fresh.has(e)).length);
      }
      if (rows.length > 0) batch.committed.push({ database, events: claim.fresh.map((e) => e.event) });
      this.release(queued);
    } catch (err) {
      if (err instanceof StorageOutcomeUnknownError && claim) {
        this.log.error('ingest insert unconfirmed; repeating it until storage answers', { database, rows: claim.fresh.length, token, err });
        const unknown = new IngestOutcomeUnknownError(`storage did not confirm the insert (${err.message}); the events may be stored once it answers again`);
        for (const s of group) s.reject(unknown);
        batch.repeating.push(this.repeatUntilKnown(batch, database, claim, queued, token));
        return;
      }
      claim?.settle(false);
      if (err instanceof StorageQueryError && err.isBadData && group.length > 1) {
        this.log.warn('the engine refused an insert; inserting its requests one by one', { database, requests: group.length, rows: queued, err });
        for (const s of group) await this.insertGroup(batch, database, [s]);
      } else if (err instanceof StorageQueryError && err.isBadData) {
        this.log.error('the engine refused the events of one request', { database, rows: queued, err });
        group[0]!.reject(new IngestRefusedError(`the engine refused these events: ${err.message.split('\n')[0]!.slice(0, MAX_REFUSAL_LENGTH)}`));
        this.release(queued);
      } else {
        this.log.error('ingest flush failed', { database, rows: queued, err });
        const unavailable = new StorageUnavailableError(`storage did not accept the events: ${(err as Error).message}`);
        for (const s of group) s.reject(unavailable);
        this.release(queued);
      }
    }
  }

  /**
   * Repeats an insert whose outcome is unknown, with its deduplication token (so it is stored
   * once, whether the first attempt took effect or not), until one attempt is answered; the
   * batch holds the frontier meanwhile, so webhooks wait rather than pass over its events. At
   * shutdown it makes one last attempt; if that fails, the outcome stays unknown, and is logged,
   * and the messageIds are freed: a resend is then stored, rather than maybe lost.
   */
  private async repeatUntilKnown(batch: Batch, database: string, claim: Claim, queued: number, token: string): Promise<void> {
    const rows = claim.fresh.map((e) => e.json);
    const events = claim.fresh.map((e) => e.event);
    const fields = { database, rows: rows.length, token, firstUuid: events[0]?.uuid, lastUuid: events.at(-1)?.uuid };
    let stored = false;
    try {
      for (let delay = REPEAT_FIRST_MS; ; delay = Math.min(2 * delay, REPEAT_MAX_MS)) {
        if (!this.closing) await Promise.race([this.closed.promise, new Promise((wake) => setTimeout(wake, delay).unref())]);
        try {
          await this.storage.insert(database, 'events', rows, token);
          this.log.warn('unconfirmed insert settled: its events are stored, once', fields);
          batch.committed.push({ database, events });
          stored = true;
          return;
        } catch (err) {
          if (!(err instanceof StorageUnavailableError) || this.closing) {
            this.log.error('unconfirmed insert abandoned: its events may or may not be stored', { ...fields, err });
            return;
          }
        }
      }
    } finally {
      claim.settle(stored);
      this.release(queued);
    }
  }

  /** `rows` have left the queue (committed or failed). */
  private release(rows: number): void {
    this.queuedRows -= rows;
    if (this.shedding && this.queuedRows <= this.options.maxQueuedRows / 2) this.shedding = false;
  }

  /** A batch is done: announce it, and any newer ones it held back, in acceptance order. */
  private settle(batch: Batch): void {
    this.inFlight.delete(batch.seq);
    this.settled.set(batch.seq, batch);
    for (let next = this.settled.get(this.nextAnnounced); next; next = this.settled.get(this.nextAnnounced)) {
      this.settled.delete(this.nextAnnounced++);
      for (const { database, events } of next.committed) this.announce(database, events);
    }
    this.pump();
  }

  private announce(database: string, events: readonly Event[]): void {
    if (!this.options.onCommitted) return;
    try {
      this.options.onCommitted(database, events);
    } catch (err) {
      this.log.error('a listener of committed events failed', { database, err });
    }
  }
}
