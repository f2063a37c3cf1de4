import { Actor } from '../actors/actor';
import type { Logger } from '../log';
import { StorageUnavailableError, type Storage } from '../storage/storage';
import type { AcceptedEvent } from './event-rows';
import type { Event } from './model';

/** The buffer holds as many events as it may; the client should retry later (503 + Retry-After). */
export class IngestOverloadedError extends Error {
  override readonly name = 'IngestOverloadedError';
}

/** The buffer is closing for shutdown and accepts nothing new. */
export class IngestClosedError extends Error {
  override readonly name = 'IngestClosedError';
}

export interface IngestBufferOptions {
  /** Hand a batch to the writer once this many rows wait, even while an insert is running. */
  flushRows: number;
  /** Hand a batch to the writer once its oldest rows have waited this long. */
  flushWaitMs: number;
  /** Rows waiting or being inserted, at most; beyond it submissions are refused. */
  maxQueuedRows: number;
  /**
   * Told of each committed insert, with its events in acceptance order, right after the promises
   * of the requests that sent them are resolved. Must not throw, and must be quick: it runs on
   * the ingest path.
   */
  onCommitted?: (database: string, events: readonly Event[]) => void;
}

interface Submission {
  database: string;
  events: readonly AcceptedEvent[];
  resolve(): void;
  reject(err: unknown): void;
}

/** Batches queued for the writer besides the one it is inserting: one, so the next is ready. */
const WRITER_MAILBOX = 1;

/**
 * Group commit for `POST /events`. Requests submit their rows and wait; submissions are gathered
 * into one insert per database and handed to the writer actor, which runs one insert at a time.
 * A batch is handed over at once when the writer is idle (a lone request is not delayed), when
 * `flushRows` rows wait, or when `flushWaitMs` has passed. Each submission resolves only after
 * the insert holding its rows has committed; a request's rows are never split across inserts.
 */
export class IngestBuffer {
  private pending: Submission[] = [];
  private pendingRows = 0;
  private queuedRows = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closing = false;
  private readonly writer: Actor<Submission[]>;

  constructor(
    private readonly storage: Storage,
    private readonly options: IngestBufferOptions,
    private readonly log: Logger,
  ) {
    this.writer = new Actor((batch) => this.write(batch), WRITER_MAILBOX);
  }

  /** Rows accepted but not yet committed. */
  get depth(): number {
    return this.queuedRows;
  }

  /** Stores `events` in `database.events`; resolves once they are committed. */
  submit(database: string, events: readonly AcceptedEvent[]): Promise<void> {
    if (this.closing) return Promise.reject(new IngestClosedError('the service is shutting down'));
    if (this.queuedRows + events.length > this.options.maxQueuedRows) {
      return Promise.reject(new IngestOverloadedError(`ingest queue is full (${this.queuedRows} events waiting)`));
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ database, events, resolve, reject });
      this.pendingRows += events.length;
      this.queuedRows += events.length;
      this.pump();
    });
  }

  /** Refuses new submissions and resolves once everything accepted is committed or failed. */
  async close(): Promise<void> {
    this.closing = true;
    this.pump();
    // Each completed insert pumps the next batch, so waiting for idleness drains everything.
    while (this.pending.length > 0 || !this.writer.idle) await this.writer.whenIdle();
    await this.writer.stop();
  }

  private pump(): void {
    if (this.pending.length === 0) return;
    if (this.writer.idle) return this.handOver();
    // The mailbox is full: the writer's next completion pumps again.
    if (this.writer.pending >= WRITER_MAILBOX) return;
    if (this.closing || this.pendingRows >= this.options.flushRows) return this.handOver();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.writer.pending < WRITER_MAILBOX) this.handOver();
    }, this.options.flushWaitMs);
  }

  /** Moves up to `flushRows` rows (whole submissions, at least one) to the writer. */
  private handOver(): void {
    if (this.pending.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    let take = 0;
    let rows = 0;
    while (take < this.pending.length && (take === 0 || rows + this.pending[take]!.events.length <= this.options.flushRows)) {
      rows += this.pending[take]!.events.length;
      take++;
    }
    const batch = this.pending.splice(0, take);
    this.pendingRows -= rows;
    this.writer.ask(batch).then(
      () => this.pump(),
      (err) => {
        for (const s of batch) s.reject(err);
        this.queuedRows -= rows;
        this.pump();
      },
    );
  }

  /** One insert per database in the batch; each submission learns its own insert's outcome. */
  private async write(batch: Submission[]): Promise<void> {
    const byDatabase = new Map<string, Submission[]>();
    for (const s of batch) {
      const group = byDatabase.get(s.database);
      if (group) group.push(s);
      else byDatabase.set(s.database, [s]);
    }
    for (const [database, group] of byDatabase) {
      const rows = group.flatMap((s) => s.events.map((e) => e.row));
      const started = performance.now();
      try {
        await this.storage.insert(database, 'events', rows);
        this.log.debug('ingest flush', { database, rows: rows.length, ms: Math.round(performance.now() - started) });
        for (const s of group) s.resolve();
        this.announce(database, group);
      } catch (err) {
        this.log.error('ingest flush failed', { database, rows: rows.length, err });
        const unavailable = new StorageUnavailableError(`storage did not accept the events: ${(err as Error).message}`);
        for (const s of group) s.reject(unavailable);
      } finally {
        this.queuedRows -= rows.length;
      }
    }
  }

  private announce(database: string, group: readonly Submission[]): void {
    if (!this.options.onCommitted) return;
    try {
      this.options.onCommitted(database, group.flatMap((s) => s.events.map((e) => e.event)));
    } catch (err) {
      this.log.error('a listener of committed events failed', { database, err });
    }
  }
}
