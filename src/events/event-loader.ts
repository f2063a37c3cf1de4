import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log';
import { lineText, StorageQueryError, type Storage } from '../storage/storage';
import type { LogPosition } from '../storage/wal/write-ahead-log';
import type { AcceptedEvent } from './event-rows';
import type { IdentityLink } from './identity-link';
import type { Event } from './model';

/** One request's events as the ingest log holds them, ready to load. */
export interface LoadItem {
  database: string;
  /** Its events: at hand, or parsed from the log when needed (only to announce them). */
  events(): readonly AcceptedEvent[];
  /** The identity links its events carry: taken at submission, or parsed from the log when needed. */
  links(): readonly IdentityLink[];
  /** The events' JSON lines, joined by newlines, in UTF-8 (as the log holds them). */
  lines: Uint8Array;
  rows: number;
  position: LogPosition;
  /** Whether the ingest buffer's observer was told of its events as they were logged (else `onStored` is, once stored). */
  observed: boolean;
}

export interface EventLoaderOptions {
  /** Told of each loaded insert, with its events in log order, once its whole batch is loaded. Must not throw. */
  onCommitted?: (database: string, events: readonly Event[]) => void;
  /** Whether `onCommitted` wants a database's events (they are not made for it otherwise). */
  announces?: (database: string) => boolean;
  /** Told of each insert, with the identity links of its events in log order, before any listener of committed events. Must not throw, and must be quick. */
  onInserted?: (database: string, links: readonly IdentityLink[]) => void;
  /**
   * Told of each insert once it is stored, with the JSON lines (newline-joined, per request) of its
   * rows the ingest buffer's observer was not told of, and the insert's de-duplication token, and
   * waited for (the event catalog adds their rows so). Must not throw.
   */
  onStored?: (database: string, lines: readonly string[], token: string) => Promise<void>;
  /** Told of each insert: its rows and how long it took (for metrics). Must not throw. */
  onFlush?: (rows: number, seconds: number) => void;
  /** Where events the engine refuses are set aside, a file per request, so that none is lost unseen. */
  refusedDir: string;
}

/** The loader was stopped while storage was away: what it was loading stays in the log for the next start. */
export class LoadAbandonedError extends Error {
  override readonly name = 'LoadAbandonedError';
}

/** Waits between attempts while storage is away: doubling from the first to the most. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;
/** While storage stays away, one failure in this many is logged (the first always). */
const LOG_EVERY_FAILURES = 20;

/**
 * Inserts batches of the ingest log into the engine: one insert per database, with a
 * de-duplication token of its own, so that an insert repeated after an unconfirmed attempt is
 * stored once. It retries while storage is away (the events are safe in
 * the log meanwhile), drops the events of a deleted workspace, and sets aside, in a file, a
 * request's events that the engine refuses as data (validation should have refused them).
 */
export class EventLoader {
  private stopping = false;
  private readonly stopped = Promise.withResolvers<void>();
  /**
   * Tokens must differ from every earlier insert's within the engine's de-duplication window, and
   * places in a log repeat (a new log starts at segment 1): so they also name this loader. After
   * a restart, replay finds what was loaded by uuid instead.
   */
  private readonly tokenPrefix = `log_${crypto.randomUUID().replaceAll('-', '')}`;

  constructor(
    private readonly storage: Storage,
    private readonly options: EventLoaderOptions,
    private readonly log: Logger,
  ) {}

  /**
   * Loads `items` in order; resolves once each is stored, dropped or set aside, and then
   * announces what was stored. While storage is away it tries again and again; once `stop()` is
   * called, an attempt that fails throws LoadAbandonedError.
   */
  async load(items: readonly LoadItem[]): Promise<void> {
    const byDatabase = new Map<string, LoadItem[]>();
    for (const item of items) {
      const group = byDatabase.get(item.database);
      if (group) group.push(item);
      else byDatabase.set(item.database, [item]);
    }
    const committed: Array<{ database: string; events: Event[] }> = [];
    for (const [database, group] of byDatabase) await this.loadGroup(database, group, committed);
    for (const { database, events } of committed) this.announce(database, events);
  }

  /** Stops retrying: the next failed attempt gives up. */
  stop(): void {
    this.stopping = true;
    this.stopped.resolve();
  }

  private async loadGroup(database: string, items: readonly LoadItem[], committed: Array<{ database: string; events: Event[] }>): Promise<void> {
    const lines = items.map((item) => item.lines);
    const rows = items.reduce((n, item) => n + item.rows, 0);
    const first = items[0]!.position;
    const token = `${this.tokenPrefix}_${first.segment}_${first.offset}_${items.length}`;
    let failures = 0;
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(2 * delay, RETRY_MAX_MS)) {
      const started = performance.now();
      try {
        await this.storage.insert(database, 'events', lines, token);
        const ms = performance.now() - started;
        this.options.onFlush?.(rows, ms / 1000);
        this.log.debug('ingest load', { database, rows, ms: Math.round(ms) });
        if (failures > 0) this.log.warn('storage took the waiting events', { database, rows, failedAttempts: failures });
        if (this.options.onInserted) this.options.onInserted(database, items.flatMap((item) => item.links()));
        const unobserved = items.filter((item) => !item.observed);
        if (this.options.onStored && unobserved.length > 0) await this.options.onStored(database, unobserved.map((item) => lineText(item.lines)), token);
        if (this.options.onCommitted && (this.options.announces?.(database) ?? true)) committed.push({ database, events: items.flatMap((item) => item.events().map((e) => e.event)) });
        return;
      } catch (err) {
        if (err instanceof StorageQueryError && err.isMissingTable) {
          this.log.warn("events of a deleted workspace dropped from the ingest log: its database is gone", { database, rows });
          return;
        }
        if (err instanceof StorageQueryError && err.isBadData) {
          if (items.length === 1) return this.setAside(items[0]!, err);
          // One request's rows must not keep the others' out: each is inserted alone.
          for (const item of items) await this.loadGroup(database, [item], committed);
          return;
        }
        failures++;
        if (this.stopping) throw new LoadAbandonedError(`storage did not take ${rows} events of ${database} (${(err as Error).message})`);
        if (failures % LOG_EVERY_FAILURES === 1) {
          this.log.error('loading events into storage failed; they wait in the ingest log and are tried again', { database, rows, failedAttempts: failures, nextInMs: delay, err });
        }
        await Promise.race([this.stopped.promise, new Promise((wake) => setTimeout(wake, delay).unref())]);
      }
    }
  }

  private setAside(item: LoadItem, err: StorageQueryError): void {
    const path = join(this.options.refusedDir, `refused-${item.position.segment}-${item.position.offset}.ndjson`);
    writeFileSync(path, Buffer.concat([item.lines, Buffer.from('\n')]));
    this.log.error('the engine refused the events of one request; they are set aside in a file', {
      database: item.database,
      rows: item.rows,
      file: path,
      err: err.message.split('\n')[0],
    });
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
