import type { AcceptedEvent } from '../events/event-rows';
import type { IngestObserver } from '../events/ingest-buffer';
import type { Event } from '../events/model';
import type { Logger } from '../log';
import { identifier, jsonLines, StorageQueryError, type Storage } from '../storage/storage';
import { Observations, observationRows, observationsSql, type CatalogRow } from './observations';

/** Events of the history added per step: one step's statement reads about this many. */
export const HISTORY_STEP_EVENTS = 200_000;
/** Stored batches whose rows may wait to be added before the loader waits for them. */
const MAX_WAITING_BATCHES = 4;
/** Pause after each step of the history, as a share of the step's own time: the loader and reads go first. */
const HISTORY_PAUSE_FACTOR = 1;

/**
 * The events of one database observed as they were logged, between two loads' starts: their rows
 * are added once every one of them is loaded (or dropped with its workspace), never before, so
 * that a crash leaves none counted that the next start loads and counts again from the log.
 */
class Chunk {
  readonly observations = new Observations();
  /** Its submissions not yet loaded. */
  unloaded = 0;
  closed = false;
  readonly added = Promise.withResolvers<void>();
}

/**
 * Keeps each workspace's `catalog` (src/storage/migrations/catalog.ts): the rows of the events the
 * ingest buffer logs, observed then (where they are already parsed) and added once loaded, a
 * chunk of submissions at a time; the rows of a batch the loader stores that was not observed so
 * (replayed from the log after a restart), parsed again from its rows and inserted with the
 * batch's de-duplication token (a repeated attempt is stored once); and, in the background, the rows of the events stored before the catalog existed, in
 * steps of arrival time, each step's insert with a token of its range so that a step repeated
 * after a stop is stored once; `catalog_progress` records each step, so a restart goes on.
 */
export class CatalogRecorder implements IngestObserver {
  private running: Promise<void> | undefined;
  private stopping = false;
  /** Batches whose rows could not be added (storage away): their counts are missing from the catalog. */
  missedBatches = 0;
  /** Per database, the adding of its latest batch's rows: the loader goes on meanwhile, reads wait for it. */
  private readonly pending = new Map<string, Promise<void>>();
  /** Batches whose rows wait to be added, in all: past MAX_WAITING_BATCHES the loader waits too, so they cannot pile up in memory. */
  private waiting = 0;
  /** Per database, the chunk that submissions being logged join. */
  private readonly open = new Map<string, Chunk>();
  /** Per database, chunks closed by a load's start whose submissions are not all loaded yet. */
  private readonly closed = new Map<string, Set<Chunk>>();

  constructor(
    private readonly storage: Storage,
    private readonly databases: () => readonly string[],
    private readonly log: Logger,
    /** `ON CLUSTER …` on a cluster (the catalog is replicated on every node), else ''. */
    private readonly onCluster = '',
  ) {}

  /**
   * Events of `database` were erased (a regulation): every example of its catalog is cleared, since
   * which value came from whose event is not kept, so no erased value stays readable; later events
   * bring examples again. Counts, times and types stay (they name no one).
   */
  async erased(database: string): Promise<void> {
    await this.settled(database);
    await this.storage.command(`ALTER TABLE ${identifier(database)}.catalog ${this.onCluster} UPDATE examples = [] WHERE notEmpty(examples) SETTINGS mutations_sync = 2`);
  }

  /**
   * Observes a submission's events as the ingest log takes them (the buffer's `observer`); their
   * rows are added once the chunk they joined is closed and all its submissions are loaded.
   */
  logged(database: string, events: readonly AcceptedEvent[]): { loaded(): void } {
    let chunk = this.open.get(database);
    if (!chunk) this.open.set(database, (chunk = new Chunk()));
    for (const { event } of events) chunk.observations.add(event);
    chunk.unloaded++;
    const joined = chunk;
    return { loaded: () => this.loadedOne(database, joined) };
  }

  /** A load starts, with the submissions logged so far: the chunks they joined are closed. */
  loadStarts(): void {
    for (const [database, chunk] of this.open) {
      chunk.closed = true;
      let closed = this.closed.get(database);
      if (!closed) this.closed.set(database, (closed = new Set()));
      closed.add(chunk);
    }
    this.open.clear();
  }

  private loadedOne(database: string, chunk: Chunk): void {
    if (--chunk.unloaded > 0 || !chunk.closed) return;
    const closed = this.closed.get(database)!;
    closed.delete(chunk);
    if (closed.size === 0) this.closed.delete(database);
    const adding = this.after(database, () => this.insertObserved(database, chunk.observations.rows));
    void adding.then(chunk.added.resolve);
  }

  /**
   * Adds the rows of a stored batch that was not observed as it was logged (the loader's
   * `onStored`) after those added before it, without holding up the loader: it answers at once,
   * unless MAX_WAITING_BATCHES are waiting. Never throws.
   */
  stored(database: string, lines: readonly string[], token: string): Promise<void> {
    const adding = this.after(database, () => this.add(database, lines, token));
    return this.waiting > MAX_WAITING_BATCHES ? adding : Promise.resolve();
  }

  /** Runs `add` after the adds of `database` before it; never rejects. */
  private after(database: string, add: () => Promise<void>): Promise<void> {
    const previous = this.pending.get(database) ?? Promise.resolve();
    this.waiting++;
    const adding = previous.then(add).finally(() => this.waiting--);
    this.pending.set(database, adding);
    void adding.then(() => {
      if (this.pending.get(database) === adding) this.pending.delete(database);
    });
    return adding;
  }

  /**
   * Resolves once the rows of every event loaded so far are in `database`'s catalog (or given up):
   * a chunk closed with some of its submissions still to load waits for them (the next load, at
   * most INGEST_LOAD_MAX_AGE_MS away).
   */
  async settled(database: string): Promise<void> {
    await Promise.all([...(this.closed.get(database) ?? [])].map((chunk) => chunk.added.promise));
    await this.pending.get(database);
  }

  private async insertObserved(database: string, rows: readonly CatalogRow[]): Promise<void> {
    try {
      await this.insert(database, rows);
    } catch (err) {
      if (err instanceof StorageQueryError && err.isMissingTable) return;
      this.missedBatches++;
      this.log.error('the event catalog missed loaded events: their counts are not in the catalog', { database, rows: rows.length, err });
    }
  }

  private async add(database: string, lines: readonly string[], token: string): Promise<void> {
    let events: Event[] = [];
    try {
      // One parse of the whole batch, plain: a number too long for a double still has its type,
      // and is not taken as an example (observations.ts).
      events = JSON.parse(`[${lines.join('\n').replaceAll('\n', ',')}]`) as Event[];
      await this.insert(database, observationRows(events), `${token}_catalog`);
    } catch (err) {
      if (err instanceof StorageQueryError && err.isMissingTable) return;
      this.missedBatches++;
      this.log.error('the event catalog missed a stored batch: its counts are not in the catalog', { database, events: events.length, err });
    }
  }

  /** Starts adding the history of every workspace that has some left, in the background. */
  start(): void {
    this.running ??= this.buildHistories().catch((err) => this.log.error('building the event catalog of stored events stopped; it goes on at the next start', { err }));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    await Promise.all(this.pending.values());
  }

  /** Whether `database`'s history is all in its catalog. */
  async historyComplete(database: string): Promise<boolean> {
    const progress = await this.progress(database);
    return progress === undefined || progress.through >= progress.end;
  }

  private async buildHistories(): Promise<void> {
    for (const database of this.databases()) {
      try {
        while (!this.stopping && (await this.historyStep(database))) {}
      } catch (err) {
        if (!(err instanceof StorageQueryError && err.isMissingTable)) throw err;
      }
      if (this.stopping) return;
    }
  }

  /** Adds one step of `database`'s history; false when none is left. */
  async historyStep(database: string): Promise<boolean> {
    const progress = await this.progress(database);
    if (progress === undefined || progress.through >= progress.end) return false;
    const started = performance.now();
    const db = identifier(database);
    const range = { from: progress.through, end: progress.end, step: HISTORY_STEP_EVENTS };
    const [last] = await this.storage.query(
      `SELECT toString(max(parsedAt)) AS to FROM (SELECT parsedAt FROM ${db}.events WHERE parsedAt > {from:DateTime64(6, 'UTC')} AND parsedAt <= {end:DateTime64(6, 'UTC')} ORDER BY parsedAt LIMIT {step:UInt64})`,
      range,
      'background',
    );
    const to = last && String(last.to) > progress.through ? String(last.to) : progress.end;
    const rows = await this.storage.query(
      observationsSql(db, "parsedAt > {from:DateTime64(6, 'UTC')} AND parsedAt <= {to:DateTime64(6, 'UTC')}"),
      { from: progress.through, to },
      'background',
    );
    await this.insert(database, rows as unknown as CatalogRow[], `catalog_history_${progress.through}_${to}`);
    await this.storage.insert(database, 'catalog_progress', jsonLines([{ historyThrough: to, historyEnd: progress.end, version: Date.now() * 1000 }]));
    const ms = performance.now() - started;
    this.log.info('event catalog: stored events added', { database, through: to, end: progress.end, rows: rows.length, ms: Math.round(ms) });
    await new Promise((wake) => setTimeout(wake, ms * HISTORY_PAUSE_FACTOR).unref());
    return to < progress.end;
  }

  private async progress(database: string): Promise<{ through: string; end: string } | undefined> {
    const [row] = await this.storage.query(
      `SELECT toString(historyThrough) AS through, toString(historyEnd) AS end FROM ${identifier(database)}.catalog_progress FINAL`,
      {},
      'background',
    );
    return row ? { through: String(row.through), end: String(row.end) } : undefined;
  }

  private async insert(database: string, rows: readonly CatalogRow[], token?: string): Promise<void> {
    if (rows.length > 0) await this.storage.insert(database, 'catalog', jsonLines(rows as unknown as Record<string, unknown>[]), token);
  }
}
