import type { Logger } from '../log';
import { RETRY_AFTER_SECONDS, unavailable, type AnswersAsProblem } from '../http/problem';
import { StorageQueryError, identifier, type Storage } from '../storage/storage';
import { LogWriteError, WriteAheadLog, type LogPosition } from '../storage/wal/write-ahead-log';
import { toEngineDateTime, type Micros } from '../timestamps';
import type { AcceptedEvent } from './event-rows';
import { EventLoader, LoadAbandonedError, type LoadItem } from './event-loader';
import { identityLinksOf, type IdentityLink } from './identity-link';
import { decodeEventLines, decodeRecordHead, encodeEventsRecord, linesOf, type RecordHead } from './log-records';
import type { Event } from './model';
import type { RecentMessageIds } from './recent-message-ids';

/** The service takes no more events for now (the log is full or the engine behind); retry later (503 + Retry-After). */
export class IngestOverloadedError extends Error implements AnswersAsProblem {
  override readonly name = 'IngestOverloadedError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS);
}

/** The buffer is closing for shutdown and accepts nothing new. */
export class IngestClosedError extends Error implements AnswersAsProblem {
  override readonly name = 'IngestClosedError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS);
}

/** A read waited too long for the events acknowledged before it to be loaded (storage is away). */
export class ReadWaitError extends Error implements AnswersAsProblem {
  override readonly name = 'ReadWaitError';
  toProblem = () => unavailable(this.message, RETRY_AFTER_SECONDS);
}

export interface IngestBufferOptions {
  /** The ingest log's directory, whether each group of appends is fdatasynced, and its segment size. */
  logDir: string;
  fsync: boolean;
  segmentBytes: number;
  /** Rows per load insert, at most (a request's rows are never split). */
  flushRows: number;
  /** An acknowledged event waits at most this long in the log before its load begins. */
  loadMaxAgeMs: number;
  /** Past this many bytes in the log, collection is refused (503) until the loader catches up. */
  maxLogBytes: number;
  /** Past this age of the oldest event not loaded, collection is refused (503). */
  maxLagMs: number;
  /** Events kept in memory for the loader; beyond, they are read back from the log when loaded. */
  memoryEvents: number;
  /** How long a read waits for earlier events to be loaded before it answers 503. */
  readWaitMs: number;
  /**
   * When a request is answered: `log`, once its events are on disk in the log; `loaded`, once they
   * are in the engine too, so that reads through other processes see them (if storage does not
   * take them within `readWaitMs`, it is answered anyway: they are safe in the log).
   */
  ack: 'log' | 'loaded';
  /**
   * Told of each insert, with the identity links its events carry, in log order. They are taken
   * from the events as they are submitted (not parsed again from their rows). Must not throw,
   * and must be quick.
   */
  onInserted?: (database: string, links: readonly IdentityLink[]) => void;
  /**
   * The links of a submission's events that `onInserted` is to be told of, called as each
   * submission takes its place in the log, in log order; every link when not given.
   * `IdentityLinks.linksOf` leaves out repeats of links already resolved, so that signed-in
   * traffic keeps nothing for them until the insert.
   */
  linksOf?: (database: string, events: readonly AcceptedEvent[]) => readonly IdentityLink[];
  /** Told of each loaded insert, with its events in log order. Must not throw, and must be quick. */
  onCommitted?: (database: string, events: readonly Event[]) => void;
  /** Whether `onCommitted` wants a database's events (they are not made for it otherwise). */
  announces?: (database: string) => boolean;
  /** Recognises repeated messageIds: a repeat is acknowledged with its request, not logged again. */
  messageIds: RecentMessageIds;
  /**
   * Told of each submission's events as they take their place in the log, where they are already
   * parsed (the event catalog observes them), and of each load's start; the answer of `logged` is
   * told once those events are loaded. Must not throw, and must be quick.
   */
  observer?: IngestObserver;
  /** Told of each insert of events `observer` was not told of (replayed from the log) once stored, with their JSON lines and the insert's de-duplication token, and waited for. Must not throw. */
  onStored?: (database: string, lines: readonly string[], token: string) => Promise<void>;
  /** Told of each insert into the engine: its rows and how long it took. Must not throw (for metrics). */
  onFlush?: (rows: number, seconds: number) => void;
  /** The check of a database's suppressed subjects (none: undefined): their events are acknowledged, never stored. */
  suppressionCheck?: (database: string) => ((event: Event) => boolean) | undefined;
  /** Told how many events of a submission were suppressed (for metrics). Must not throw. */
  onSuppressed?: (database: string, events: number) => void;
  /** Checks a submission's events (those not suppressed) against the database's tracking plan: undefined when none applies or all pass. Must be quick. */
  screen?: (database: string, events: readonly AcceptedEvent[], door: Door | undefined) => Screening | undefined;
}

/** What `IngestBufferOptions.observer` is told (the event catalog, src/catalog/catalog-recorder.ts). */
export interface IngestObserver {
  /** A submission's events took their place in the log; the answer is told once they are loaded. */
  logged(database: string, events: readonly AcceptedEvent[]): { loaded(): void };
  /** A load starts, with the submissions logged so far. */
  loadStarts(): void;
}

/** The door events came through: a tracking plan may treat each its own way. */
export const DOORS = ['events', 'segment', 'plausible', 'import'] as const;
export type Door = (typeof DOORS)[number];

/** What a workspace's tracking plan makes of a submission's events (src/tracking-plans/). */
export interface Screening {
  /** The events to store. */
  kept: readonly AcceptedEvent[];
  /** Keeps apart the events the plan quarantines: done before the request is answered, and before its events are logged. */
  hold(): Promise<void>;
  /** Counts the violations, once the request's events are kept. */
  settle(): void;
}

/** One request's events in the log, from its append until it is loaded. */
interface Entry {
  /** Place in log order. */
  seq: number;
  /** Its submission, for the frontier. */
  submission: number;
  database: string;
  rows: number;
  /** Size of its record in the log. */
  bytes: number;
  /**
   * Its events' rows (UTF-8, as its log record holds them), held for the loader while they fit in
   * memory; undefined once spilled (read back from the log when loaded). The event objects are
   * not kept: they are made again from the rows only for a workspace whose webhooks or live
   * streams want them.
   */
  lines: Uint8Array | undefined;
  /** The identity links of its events, when `onInserted` wants them; undefined for a record recovered from the log. */
  links?: readonly IdentityLink[];
  /** What the observer made of its events, told when they are loaded; undefined for a record recovered from the log. */
  observed?: { loaded(): void };
  state: 'appending' | 'logged' | 'failed';
  position?: LogPosition;
  /** When it was logged (ms, Date.now()). */
  loggedAt: number;
  /**
   * Records its messageIds as stored, once it is loaded: until then a repeat waits rather than
   * being looked up in the table, which does not hold the events yet.
   */
  settleIds?: (stored: boolean) => void;
}

interface Waiter {
  target: number;
  resolve(): void;
}

const NO_IDS = () => {};
/** Requests whose record is this large (1 MiB) are answered once loaded, whatever INGEST_ACK says. */
const LOADED_ACK_BYTES = 1024 * 1024;
/**
 * Bytes of rows per insert, at most, whatever INGEST_FLUSH_ROWS allows: the engine's memory for an
 * insert grows with it (20,000 events of 1 KB each made the process pass its memory bound).
 */
const LOAD_MAX_BYTES = 8 * 1024 * 1024;
/** How long loading pauses after the log itself failed. */
const LOAD_FAILURE_PAUSE_MS = 1000;

/** A replayed record already in the engine is found by one uuid: an insert is all or nothing. */
const REPLAY_CHECK_CHUNK = 10_000;

/**
 * The ingest path: a request's events are appended to a write-ahead log on local disk (one
 * write, and with `fsync` one fdatasync, for every request waiting at that moment), and the
 * request is answered as soon as its group is on disk. A loader inserts what the log holds into
 * the engine in large batches (when `flushRows` rows wait, when the oldest has waited
 * `loadMaxAgeMs`, or at once when a read asks), then marks them loaded so the log can drop them.
 *
 * Read-your-writes: `loaded(database)` resolves once every event of the database acknowledged
 * before the call is in the engine, loading at once if need be. Reads call it first.
 */
export class IngestBuffer {
  private readonly queue: Entry[] = [];
  private head = 0;
  private nextSeq = 0;
  /** seq of the last entry loaded (or dropped): every entry up to it is done. */
  private loadedSeq = -1;
  private readonly lastSeqOf = new Map<string, number>();
  /** Submissions accepted and not yet loaded or failed, by number: oldest parsedAt first. */
  private readonly unsettled = new Map<number, Micros>();
  private nextSubmission = 0;
  private unloadedRows = 0;
  private memoryRows = 0;
  private waiters: Waiter[] = [];
  private loading = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closing = false;
  private abandoned = false;
  /** After a failure of the log itself, no load starts before this (ms, Date.now()). */
  private pausedUntil = 0;
  /** Submissions being logged, and who waits for there to be none (close). */
  private submitting = 0;
  private noneSubmitting: PromiseWithResolvers<void> | undefined;
  private readonly loader: EventLoader;

  private constructor(
    private readonly storage: Storage,
    private readonly wal: WriteAheadLog,
    private readonly options: IngestBufferOptions,
    private readonly log: Logger,
  ) {
    this.loader = new EventLoader(storage, { onInserted: options.onInserted, onCommitted: options.onCommitted, announces: options.announces, onStored: options.onStored, onFlush: options.onFlush, refusedDir: options.logDir }, log);
  }

  /**
   * Opens the log and queues for loading what it holds beyond the last load (what a crash left),
   * but for the requests the engine already holds. `drain()` then waits for them.
   */
  static async open(storage: Storage, options: IngestBufferOptions, log: Logger): Promise<IngestBuffer> {
    const { wal, recovered } = WriteAheadLog.open({ dir: options.logDir, fsync: options.fsync, segmentBytes: options.segmentBytes, log });
    const buffer = new IngestBuffer(storage, wal, options, log);
    if (recovered.length > 0) await buffer.replay(recovered.map((r) => ({ ...decodeRecordHead(r.payload), position: r.position })));
    return buffer;
  }

  /** The most events one submission may hold. */
  get capacity(): number {
    return this.options.memoryEvents;
  }

  /** Events acknowledged (or being logged) and not yet loaded. */
  get depth(): number {
    return this.unloadedRows;
  }

  /** Bytes in the ingest log's segments. */
  get logBytes(): number {
    return this.wal.bytes;
  }

  /** Seconds the oldest event not yet loaded has waited (0 when none waits). */
  get lagSeconds(): number {
    const oldest = this.queue[this.head];
    return oldest && oldest.state === 'logged' ? Math.max(0, (Date.now() - oldest.loggedAt) / 1000) : 0;
  }

  /**
   * The parsedAt of the oldest event accepted and not yet loaded (or failed), if any: the table
   * is complete below it. Submissions are numbered in call order, which is parsedAt order.
   */
  frontier(): Micros | undefined {
    for (const parsedAt of this.unsettled.values()) return parsedAt;
    return undefined;
  }

  /** Throws when submissions are refused (shutdown, a full log, a loader too far behind). */
  admit(): void {
    if (this.closing) throw new IngestClosedError('the service is shutting down');
    if (this.wal.bytes > this.options.maxLogBytes) {
      throw new IngestOverloadedError(`the ingest log holds ${this.wal.bytes} bytes, over its limit of ${this.options.maxLogBytes} (INGEST_LOG_MAX_BYTES): the engine is behind`);
    }
    const lag = this.lagSeconds;
    if (lag * 1000 > this.options.maxLagMs) {
      throw new IngestOverloadedError(`events have waited ${lag.toFixed(1)} s to be loaded into storage, over the limit of ${this.options.maxLagMs / 1000} s (INGEST_LOAD_MAX_LAG_MS)`);
    }
  }

  /**
   * Logs `events` for `database.events`, but those of suppressed subjects, those the tracking plan
   * holds back (drops or quarantines) and repeats of a stored messageId; resolves once they are on
   * disk, with how many were stored, suppressed and held back (the rest were repeats). `door` is where they came in (none: the service's own events).
   */
  async submit(database: string, events: readonly AcceptedEvent[], door?: Door): Promise<{ stored: number; suppressed: number; heldBack: number }> {
    this.admit();
    if (events.length > this.options.memoryEvents) {
      throw new IngestOverloadedError(`${events.length} events in one request is more than the ingest queue holds (${this.options.memoryEvents}, INGEST_QUEUE_MAX_EVENTS)`);
    }
    // Everything up to the first await runs at once, so submissions are numbered in call order.
    const unsuppressed = this.withoutSuppressed(database, events);
    const suppressed = events.length - unsuppressed.length;
    const screening = unsuppressed.length > 0 ? this.options.screen?.(database, unsuppressed, door) : undefined;
    const kept = screening ? screening.kept : unsuppressed;
    const heldBack = unsuppressed.length - kept.length;
    if (kept.length === 0) {
      if (screening) {
        await screening.hold();
        screening.settle();
      }
      return { stored: 0, suppressed, heldBack };
    }
    const submission = this.nextSubmission++;
    this.unsettled.set(submission, kept[0]!.parsedAt);
    this.submitting++;
    try {
      const stored = await this.logSubmission(submission, database, kept, screening);
      screening?.settle();
      return { stored, suppressed, heldBack };
    } finally {
      if (--this.submitting === 0) this.noneSubmitting?.resolve();
    }
  }

  private async logSubmission(submission: number, database: string, events: readonly AcceptedEvent[], screening: Screening | undefined): Promise<number> {
    let settle: ((stored: boolean) => void) | undefined;
    try {
      // Quarantined events are written first: a request whose quarantine fails keeps nothing.
      if (screening) await screening.hold();
      // Without messageIds there is nothing to claim: no wait for a promise on the hot path.
      const claim = events.some((e) => e.event.messageId !== undefined) ? await this.options.messageIds.claim(database, events) : { fresh: events, settle: NO_IDS };
      settle = claim.settle;
      if (claim.fresh.length === 0) {
        this.unsettled.delete(submission);
        claim.settle(true);
        return 0;
      }
      const entry = this.enqueue(submission, database, claim.fresh.length);
      const record = encodeEventsRecord(database, claim.fresh);
      entry.lines = linesOf(record, database);
      if (this.options.onInserted) entry.links = this.options.linksOf ? this.options.linksOf(database, claim.fresh) : identityLinksOf(claim.fresh);
      try {
        entry.position = await this.wal.append(record);
      } catch (err) {
        entry.state = 'failed';
        this.unloadedRows -= entry.rows;
        this.schedule();
        throw err;
      }
      entry.state = 'logged';
      entry.loggedAt = Date.now();
      entry.bytes = entry.position.length;
      entry.settleIds = claim.settle;
      entry.observed = this.options.observer?.logged(database, claim.fresh);
      this.hold(entry);
      this.schedule();
      // A large request is answered once loaded, like INGEST_ACK=loaded: its body's place in
      // MAX_BODY_BYTES_IN_FLIGHT is then held until the engine has it, which bounds the memory
      // that large batches arriving faster than the engine takes them would otherwise pile up.
      const waitForLoad = this.options.ack === 'loaded' || entry.bytes >= LOADED_ACK_BYTES;
      if (waitForLoad && !(await this.waitFor(entry.seq, this.options.readWaitMs))) {
        this.log.warn('events answered before storage took them: they wait in the ingest log', { database, rows: entry.rows, waitedMs: this.options.readWaitMs });
      }
      return entry.rows;
    } catch (err) {
      settle?.(false);
      this.unsettled.delete(submission);
      if (err instanceof LogWriteError) {
        if (this.closing) throw new IngestClosedError('the service is shutting down');
        this.log.error('the ingest log refused events; the request gets 503', { database, rows: events.length, err });
        throw new IngestOverloadedError(`${err.message}; nothing of this request was kept`);
      }
      throw err;
    }
  }

  private enqueue(submission: number, database: string, rows: number): Entry {
    const entry: Entry = { seq: this.nextSeq++, submission, database, rows, bytes: 0, lines: undefined, state: 'appending', loggedAt: 0 };
    this.queue.push(entry);
    this.lastSeqOf.set(database, entry.seq);
    this.unloadedRows += entry.rows;
    return entry;
  }

  private withoutSuppressed(database: string, events: readonly AcceptedEvent[]): readonly AcceptedEvent[] {
    const suppressed = this.options.suppressionCheck?.(database);
    if (!suppressed) return events;
    const kept = events.filter((e) => !suppressed(e.event));
    if (kept.length < events.length) this.options.onSuppressed?.(database, events.length - kept.length);
    return kept;
  }

  /**
   * Resolves once every event of `database` (of every database, without one) acknowledged
   * before the call is loaded into the engine, asking for a load at once if one is needed.
   * Answers 503 (ReadWaitError) if that takes longer than `readWaitMs`.
   */
  async loaded(database?: string): Promise<void> {
    const target = database === undefined ? this.nextSeq - 1 : this.lastSeqOf.get(database);
    if (target === undefined || (await this.waitFor(target, this.options.readWaitMs))) return;
    throw new ReadWaitError(`events sent before this request are not in storage yet (waited ${this.options.readWaitMs / 1000} s; storage may be unavailable)`);
  }

  /** Whether the entry numbered `target` and all before it were loaded within `ms`; a load starts at once. */
  private async waitFor(target: number, ms: number): Promise<boolean> {
    if (target <= this.loadedSeq) return true;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.waiters.push({ target, resolve });
    this.schedule();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
    try {
      return await Promise.race([promise.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves once everything logged so far is loaded (or the loader gave up at shutdown). */
  async drain(): Promise<void> {
    while (this.loadedSeq < this.nextSeq - 1 && !this.abandoned) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.waiters.push({ target: this.nextSeq - 1, resolve });
      this.schedule();
      await promise;
    }
  }

  /**
   * Refuses new submissions, logs those under way, and loads everything logged. If storage is
   * away, one last attempt is made; what it cannot load stays in the log for the next start.
   */
  async close(): Promise<void> {
    this.closing = true;
    // Loading goes on while storage takes it; the first failure ends it.
    this.loader.stop();
    if (this.submitting > 0) {
      this.noneSubmitting = Promise.withResolvers<void>();
      await this.noneSubmitting.promise;
    }
    await this.drain();
    clearTimeout(this.timer);
    await this.wal.close();
  }

  /** Starts a load when one is due, else sets a timer for when the oldest entry will be. */
  private schedule(): void {
    if (this.loading || this.abandoned || Date.now() < this.pausedUntil) return;
    this.skipFailed();
    const first = this.queue[this.head];
    if (!first || first.state !== 'logged') return;
    const asked = this.waiters.length > 0 || this.closing;
    const wait = asked || this.unloadedRows >= this.options.flushRows ? 0 : first.loggedAt + this.options.loadMaxAgeMs - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.loadNext();
  }

  /** Entries whose append failed are not in the log: they count as done. */
  private skipFailed(): void {
    while (this.head < this.queue.length && this.queue[this.head]!.state === 'failed') this.done(this.queue[this.head++]!);
    this.compact();
  }

  private async loadNext(): Promise<void> {
    this.loading = true;
    const batch: Entry[] = [];
    let rows = 0;
    let bytes = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const entry = this.queue[i]!;
      if (entry.state !== 'logged' || (batch.length > 0 && (rows + entry.rows > this.options.flushRows || bytes + entry.bytes > LOAD_MAX_BYTES))) break;
      batch.push(entry);
      rows += entry.rows;
      bytes += entry.bytes;
    }
    this.options.observer?.loadStarts();
    try {
      await this.loader.load(batch.map((e) => this.loadItem(e)));
      for (const entry of batch) {
        if (entry.lines !== undefined) this.memoryRows -= entry.rows;
        this.done(entry);
      }
      this.head += batch.length;
      this.compact();
      this.wal.markLoaded(batch.at(-1)!.position!);
    } catch (err) {
      if (!(err instanceof LoadAbandonedError)) {
        // The log itself failed (reading a spilled record back, recording progress, a full disk):
        // the batch stays queued and is tried again shortly; nothing acknowledged is dropped.
        this.log.error('loading from the ingest log failed; trying again shortly', { events: this.unloadedRows, err });
        this.pausedUntil = Date.now() + LOAD_FAILURE_PAUSE_MS;
        setTimeout(() => this.schedule(), LOAD_FAILURE_PAUSE_MS).unref();
        return;
      }
      this.abandoned = true;
      // Repeats waiting for these ids may go: the events are safe in the log.
      for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.settleIds?.(true);
      this.log.error('stopping with events not loaded: they stay in the ingest log and are loaded at the next start', { events: this.unloadedRows, err });
    } finally {
      this.loading = false;
      this.wakeWaiters();
      this.schedule();
    }
  }

  /** Keeps a logged entry's events in memory while they fit, else leaves them to be read back. */
  private hold(entry: Entry): void {
    if (this.memoryRows + entry.rows <= this.options.memoryEvents) {
      this.memoryRows += entry.rows;
      return;
    }
    entry.lines = undefined;
  }

  private loadItem(entry: Entry): LoadItem {
    const { database, rows, position } = entry;
    const taken = entry.links;
    const observed = entry.observed !== undefined;
    if (entry.lines !== undefined) {
      const lines = entry.lines;
      const events = () => decodeEventLines(lines);
      return { database, rows, position: position!, lines, events, links: () => taken ?? identityLinksOf(events()), observed };
    }
    // Read back from the log: the rows at once, the events parsed only if they are announced.
    const lines = linesOf(this.wal.read(position!), database);
    const events = () => decodeEventLines(lines);
    return { database, rows, position: position!, lines, events, links: () => taken ?? identityLinksOf(events()), observed };
  }

  private done(entry: Entry): void {
    this.loadedSeq = entry.seq;
    entry.settleIds?.(true);
    entry.observed?.loaded();
    this.unsettled.delete(entry.submission);
    if (entry.state === 'logged') this.unloadedRows -= entry.rows;
    if (this.lastSeqOf.get(entry.database) === entry.seq) this.lastSeqOf.delete(entry.database);
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const waiting: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.target <= this.loadedSeq || this.abandoned) w.resolve();
      else waiting.push(w);
    }
    this.waiters = waiting;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * Queues recovered records for loading, but those the engine already holds (loaded before a
   * crash, which came before their load was recorded): a record is found by its first event's
   * uuid, since an insert stores all of its rows or none.
   */
  private async replay(records: Array<RecordHead & { position: LogPosition }>): Promise<void> {
    const started = performance.now();
    const held = new Set<string>();
    const gone = new Set<string>();
    const byDatabase = Map.groupBy(records, (r) => r.database);
    for (const [database, group] of byDatabase) {
      try {
        for (let i = 0; i < group.length; i += REPLAY_CHECK_CHUNK) {
          const chunk = group.slice(i, i + REPLAY_CHECK_CHUNK);
          const from = chunk.reduce((min, r) => (r.first.parsedAt < min ? r.first.parsedAt : min), chunk[0]!.first.parsedAt);
          const uuids = await this.storage.queryLines(
            `SELECT DISTINCT toString(uuid) FROM ${identifier(database)}.events WHERE parsedAt >= {from:DateTime64(6, 'UTC')} AND toString(uuid) IN {uuids:Array(String)}`,
            { from: toEngineDateTime(from), uuids: chunk.map((r) => r.first.event.uuid) },
            'write',
          );
          for (const uuid of uuids) held.add(uuid);
        }
      } catch (err) {
        if (!(err instanceof StorageQueryError && err.isMissingTable)) throw err;
        gone.add(database);
      }
    }
    let queued = 0;
    for (const r of records) {
      if (gone.has(r.database) || held.has(r.first.event.uuid)) continue;
      const entry = this.enqueue(this.nextSubmission, r.database, r.rows);
      this.unsettled.set(this.nextSubmission++, r.first.parsedAt);
      entry.state = 'logged';
      entry.position = r.position;
      entry.loggedAt = Date.now();
      entry.lines = r.lines;
      entry.bytes = r.position.length;
      this.hold(entry);
      queued += entry.rows;
    }
    // Nothing to load: the log is marked loaded through its last record, so it is not read again.
    if (queued === 0) this.wal.markLoaded(records.at(-1)!.position);
    this.log.info('ingest log replayed', {
      records: records.length,
      alreadyStored: records.filter((r) => held.has(r.first.event.uuid)).length,
      droppedDeletedWorkspaces: [...gone],
      eventsToLoad: queued,
      ms: Math.round(performance.now() - started),
    });
  }
}
