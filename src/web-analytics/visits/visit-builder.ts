import type { Logger } from '../../log';
import { identifier, type Storage } from '../../storage/storage';
import { arrivedWindows, deleteVisits, extendVisits, dropVisits, historyStepEnd, historyWindows, newestArrival, nextStepEnd, readProgress, rebuildVisits, storedSpans, touchedSpans, writeProgress, type Statement, type VisitWindow } from './visit-build-sql';
import { VISIT_DEFINITION } from './visit-definition';

export interface VisitBuilderOptions {
  /** Minutes of inactivity that end a visit (SESSION_TIMEOUT_MINUTES). */
  sessionTimeoutMinutes: number;
  /** Events built per step at most: a workspace's history is built in steps of this many. */
  stepEvents?: number;
  /**
   * With several processes on one ClickHouse server, which of them builds: the holder of a lease
   * (src/coordination/lease.ts). Absent: this process, the only one.
   */
  election?: BuilderElection;
  /** The databases of every workspace, which an elected builder looks at every POLL_MS. */
  databases?: () => readonly string[];
  /** The table visits are stored in, for dropping them all: `visits`, or on a cluster `visits_local ON CLUSTER ...`. */
  storageTable?: string;
}

/** The lease an elected builder holds while it builds. */
export interface BuilderElection {
  holds(): boolean;
  onChange(listener: (held: boolean) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A database's builder: whether a build runs, whether more arrived meanwhile, and who waits. */
interface DatabaseState {
  /** The build under way: one step (a load's arrivals, or a step of the history). */
  running?: Promise<void>;
  dirty: boolean;
  /** Loads told of (`changed`), and how many of them the builds that finished covered. */
  requested: number;
  covered: number;
  /** Whether the last build failed: reads do not wait for visits then (they read events). */
  failing: boolean;
  /** Keys whose every stored visit is made again at the next build (erasure). */
  erased: Set<string>;
  /** Whether every event stored is built (the Stats API reads stored visits only then). */
  complete: boolean;
  through?: string;
  /** While the history is built: the time (µs) up to which it is. */
  historyThrough?: string;
  /**
   * Whether the history is one step (a new workspace's first load is): reads wait for it as for a
   * load's build, instead of answering from events by another cut of visits meanwhile.
   */
  shortHistory?: boolean;
  /** The pause after a step of the history, before the next. */
  paused?: ReturnType<typeof setTimeout>;
  /** Where the next build starts instead, when before `through` (loadedSince). */
  since?: string;
  version: number;
  /** Reads waiting in `built`: a build for them starts at once, without the gap after the last. */
  waiting: number;
  /** When the last build ended (performance.now()) and how long it took: the gap before the next. */
  lastEnded: number;
  lastTook: number;
  /** The build put off until the gap after the last has passed. */
  deferred?: ReturnType<typeof setTimeout>;
}

const STEP_EVENTS = 200_000;
/** How often an elected builder looks for events loaded by every process. */
const POLL_MS = 1000;
/**
 * An elected builder builds events once they arrived this long ago: other processes stamp and
 * load theirs a little late, by their own clocks (as the webhook owner reads them settled).
 */
const SHARED_SETTLE_MICROS = 2_000_000n;
/** No bound on arrival: every event stored is loaded (9999-12-31). */
const MAX_MICROS = 253402300799000000n;
/** After a failed build, the next is tried this much later (the events wait in the engine). */
const RETRY_MS = 1000;
/**
 * Between two builds of arrivals nobody waits for, at least this long, or BUILD_GAP_FACTOR times as
 * long as the last build took if longer: under steady ingest a build after every load cut every
 * busy device's visit again each time (a cancel row and a new one each), so the builder took most
 * of the engine and memory; a read waiting for its loads' visits starts its build at once.
 */
const MIN_BUILD_GAP_MS = 2000;
/**
 * A gap eight times the last build's keeps builds nobody waits for within a ninth of the time
 * (1 / (1 + 8)), whatever they cost: a visit cut again reads all its events again. Under batched
 * ingest at the maximum rate, 0.92 of the rate without builds (0.86 with a gap of four times).
 */
const BUILD_GAP_FACTOR = 8;
/** The longest pause between two steps of a history (each waits as long as the step before took). */
const MAX_HISTORY_PAUSE_MS = 10_000;
/**
 * At start, events that arrived this long before the last one built are built again: a stop may
 * come between loading events and building them, and requests accepted at the same time reach the
 * log a little out of order. Building is idempotent, so again costs only time.
 */
const RECOVERY_MARGIN_MICROS = 10n * 60n * 1_000_000n;

/**
 * Keeps each workspace's `visits` table (src/storage/migrations/visits.ts) as events arrive: one
 * build at a time per database, started after each load and again while more arrive. A build
 * takes the events that arrived (by `parsedAt`) since the last one, and for each visit key cuts
 * again, in the engine, the visits its new events touch: late events join or split the visit they
 * fall in. A workspace's history is built the same way, in steps, from its first event; until it
 * is, `complete` is false and the Stats API reads events.
 */
export class VisitBuilder {
  private readonly states = new Map<string, DatabaseState>();
  private readonly timeoutMicros: number;
  private readonly step: number;
  private readonly timeoutMinutes: number;
  private readonly storageTable: string;
  private readonly election: BuilderElection | undefined;
  private readonly databases: () => readonly string[];
  private poll: ReturnType<typeof setInterval> | undefined;
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly log: Logger,
    options: VisitBuilderOptions,
  ) {
    this.timeoutMicros = options.sessionTimeoutMinutes * 60_000_000;
    this.step = options.stepEvents ?? STEP_EVENTS;
    this.timeoutMinutes = options.sessionTimeoutMinutes;
    this.storageTable = options.storageTable ?? 'visits';
    this.election = options.election;
    this.databases = options.databases ?? (() => []);
    // A new holder reads where the last one came to.
    this.election?.onChange((held) => {
      if (held) for (const state of this.states.values()) state.through = undefined;
    });
  }

  /** Starts the election, if any, and an elected builder's look at every workspace each POLL_MS. */
  async start(): Promise<void> {
    if (!this.election) return;
    await this.election.start();
    this.poll = setInterval(() => {
      if (this.election!.holds()) for (const database of this.databases()) this.changed(database);
    }, POLL_MS);
    this.poll.unref();
  }

  /** Workspaces whose events are not all built: their history, or what arrived last. */
  get pending(): number {
    if (this.election && !this.election.holds()) return 0;
    let n = 0;
    for (const state of this.states.values()) if (!state.complete || state.dirty || state.running) n++;
    return n;
  }

  /** Events of `database` were loaded: a build follows. */
  changed(database: string): void {
    const state = this.state(database);
    state.dirty = true;
    state.requested++;
    this.schedule(database, state);
  }

  /**
   * Events that arrived at `parsedAt` or after were loaded after others that arrived later (an
   * import's batch): the next build looks back to them.
   */
  loadedSince(database: string, parsedAt: bigint): void {
    const state = this.state(database);
    const before = String(parsedAt - 1n);
    state.since = state.since === undefined || BigInt(before) < BigInt(state.since) ? before : state.since;
    this.changed(database);
  }

  /** The visits of `keys` (a person's ids, erased) are made again from what events remain. */
  async erased(database: string, keys: readonly string[]): Promise<void> {
    if (this.election && !this.election.holds()) {
      // Another process builds: the erased keys' visits go at once (another person's events on
      // the same device lose their visits with them).
      await this.query(deleteVisits(identifier(database), this.storageTable, keys));
      return;
    }
    const state = this.state(database);
    for (const key of keys) state.erased.add(key);
    this.changed(database);
    await this.built(database);
  }

  /**
   * Resolves once every event loaded before the call is built into visits, with true; with false
   * at once while the workspace's history is still being built (its questions read events then).
   */
  async built(database: string): Promise<boolean> {
    if (this.election) {
      // Built by whichever process holds the lease, a second or two behind the loads.
      const [progress] = await this.query(readProgress(identifier(database)));
      return Boolean(progress && Number(progress.complete) !== 0 && this.current(progress));
    }
    const state = this.state(database);
    const target = state.requested;
    state.waiting++;
    try {
      for (;;) {
        if (this.stopped || state.failing) return false;
        if (state.through !== undefined && !state.complete && !state.shortHistory) {
          this.schedule(database, state);
          return false;
        }
        if (state.covered >= target && state.through !== undefined && state.complete) return true;
        this.schedule(database, state);
        await state.running;
      }
    } finally {
      state.waiting--;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
    for (const state of this.states.values()) {
      clearTimeout(state.paused);
      clearTimeout(state.deferred);
    }
    await Promise.all([...this.states.values()].map((s) => s.running?.catch(() => {})));
    await this.election?.stop();
  }

  /** The database is gone: its state is forgotten. */
  forget(database: string): void {
    this.states.delete(database);
  }

  private state(database: string): DatabaseState {
    let state = this.states.get(database);
    if (!state) this.states.set(database, (state = { dirty: true, requested: 1, covered: 0, failing: false, erased: new Set(), complete: false, version: 0, waiting: 0, lastEnded: -Infinity, lastTook: 0 }));
    return state;
  }

  /**
   * Starts a build when one is due and none runs; another follows while more arrive, once the
   * history is built after a gap (MIN_BUILD_GAP_MS) unless a read waits for it or the last failed
   * (retried after RETRY_MS).
   */
  private schedule(database: string, state: DatabaseState): void {
    if (state.running || state.paused || this.stopped || !state.dirty || (this.election && !this.election.holds())) return;
    const due = state.lastEnded + Math.max(MIN_BUILD_GAP_MS, BUILD_GAP_FACTOR * state.lastTook);
    if (state.complete && !state.failing && state.waiting === 0 && performance.now() < due) {
      state.deferred ??= setTimeout(() => {
        state.deferred = undefined;
        this.schedule(database, state);
      }, due - performance.now());
      state.deferred.unref?.();
      return;
    }
    clearTimeout(state.deferred);
    state.deferred = undefined;
    const covers = state.requested;
    const started = performance.now();
    state.dirty = false;
    state.running = this.build(database, state).then(
      () => {
        state.covered = Math.max(state.covered, covers);
        state.failing = false;
      },
      (err) => {
        this.log.warn('visits could not be built; trying again in a second', { database, err });
        state.failing = true;
        setTimeout(() => {
          state.dirty = true;
          this.schedule(database, state);
        }, RETRY_MS).unref();
      },
    );
    state.running.finally(() => {
      state.running = undefined;
      state.lastEnded = performance.now();
      state.lastTook = state.lastEnded - started;
      this.schedule(database, state);
    });
  }

  private async build(database: string, state: DatabaseState): Promise<void> {
    const db = identifier(database);
    if (state.through === undefined) {
      await this.resume(database, db, state);
      // The history is built by the next builds, reads meanwhile answering from events.
      if (!state.complete) return void (state.dirty = true);
    }
    // Erased keys' visits go first, the history's already built included.
    if (state.erased.size > 0) {
      const keys = [...state.erased];
      state.erased.clear();
      const spans = await this.windows(storedSpans(db, keys));
      if (spans.length > 0) await this.rebuild(db, spans);
    }
    if (!state.complete) return this.historyStep(database, db, state);
    if (state.since !== undefined) {
      if (BigInt(state.since) < BigInt(state.through!)) state.through = state.since;
      state.since = undefined;
    }
    for (;;) {
      const below = this.election ? String(BigInt(Date.now()) * 1000n - SHARED_SETTLE_MICROS) : String(MAX_MICROS);
      const [next] = await this.query(nextStepEnd(db, state.through!, this.step, below));
      const count = Number(next?.n ?? 0);
      if (count === 0) break;
      const through = String(next!.through);
      // The keys whose arrivals only continue their last visit are merged into it; the others'
      // visits are cut again. Both are read before either insert, whose keys they split.
      const windows = await this.windows(arrivedWindows(db, state.through!, through, this.timeoutMicros));
      const widened = windows.length > 0 ? await this.widen(db, windows) : [];
      await this.command(extendVisits(db, state.through!, through, this.timeoutMicros));
      if (windows.length > 0) await this.cut(db, windows, widened);
      await this.query(writeProgress(db, { through, complete: true, historyThrough: '0' }, this.timeoutMinutes, this.nextVersion(state)));
      state.through = through;
      if (count < this.step || this.stopped) break;
    }
  }

  /** Reads where the builder came to (the first build of a database in this process). */
  private async resume(database: string, db: string, state: DatabaseState): Promise<void> {
    let [progress] = await this.query(readProgress(db));
    if (progress && !this.current(progress)) {
      // Cut with another timeout, or made by another definition: every visit is made again.
      this.log.info('visits are built again for a new session timeout or visit definition', {
        database,
        was: { timeoutMinutes: Number(progress.timeoutMinutes), definition: Number(progress.definition) },
        now: { timeoutMinutes: this.timeoutMinutes, definition: VISIT_DEFINITION },
      });
      await this.query(dropVisits(db, this.storageTable));
      progress = undefined;
    }
    if (!progress) {
      // The history: every event stored now, built in steps of time.
      const [newest] = await this.query(newestArrival(db));
      const events = Number(newest?.n ?? 0);
      state.through = events > 0 ? String(newest!.through) : '0';
      state.complete = events === 0;
      state.shortHistory = events <= this.step;
      state.historyThrough = '0';
      await this.query(writeProgress(db, { through: state.through, complete: state.complete, historyThrough: '0' }, this.timeoutMinutes, this.nextVersion(state)));
      if (!state.complete) this.log.info('building visits', { database, events });
      return;
    }
    state.complete = Number(progress.complete) !== 0;
    state.historyThrough = String(progress.historyThrough);
    // A stop may have come between a load and its build: built again, which is harmless.
    const through = BigInt(String(progress.through)) - (state.complete ? RECOVERY_MARGIN_MICROS : 0n);
    state.through = String(through < 0n ? 0n : through);
    if (!state.complete) this.log.info('building visits', { database, from: new Date(Number(BigInt(state.historyThrough) / 1000n)).toISOString() });
  }

  /**
   * One step of the history: the visit events stored before it began (`through`), in order of
   * time, `step` at a time, so each step reads the events and visits of its own stretch of time
   * (in order of arrival, an import's spread over months would read them all at every step). The
   * next step waits as long as this one took: the history leaves the engine half free.
   */
  private async historyStep(database: string, db: string, state: DatabaseState): Promise<void> {
    const started = performance.now();
    const from = state.historyThrough!;
    const [next] = await this.query(historyStepEnd(db, from, state.through!, this.step));
    const last = next === undefined;
    // A step ends before the time of the event after it; many events of one time go together.
    const end = last ? String(MAX_MICROS) : String(next.end) === from ? String(BigInt(from) + 1n) : String(next.end);
    const windows = await this.windows(historyWindows(db, from, end, state.through!));
    if (windows.length > 0) await this.rebuild(db, windows);
    await this.query(writeProgress(db, { through: state.through!, complete: last, historyThrough: end }, this.timeoutMinutes, this.nextVersion(state)));
    state.historyThrough = end;
    state.complete = last;
    if (last) {
      this.log.info('visits built', { database });
      // What arrived meanwhile is built by arrival, as every later load.
      state.dirty = true;
      return;
    }
    this.log.info('building visits', { database, through: new Date(Number(BigInt(end) / 1000n)).toISOString() });
    const pause = Math.min(performance.now() - started, MAX_HISTORY_PAUSE_MS);
    state.paused = setTimeout(() => {
      state.paused = undefined;
      state.dirty = true;
      this.schedule(database, state);
    }, pause);
    state.paused.unref?.();
  }

  /** Whether visits built as `progress` says are those of this timeout and definition. */
  private current(progress: Record<string, unknown>): boolean {
    return Number(progress.timeoutMinutes) === this.timeoutMinutes && Number(progress.definition) === VISIT_DEFINITION;
  }

  /** A version of the progress row later than every one before (ReplacingMergeTree keeps the highest). */
  private nextVersion(state: DatabaseState): number {
    return Date.now() * 1000 + (state.version++ % 1000);
  }

  /** Cuts again the visits of each window's key, widened to the stored visits it touches. */
  private async rebuild(db: string, windows: VisitWindow[]): Promise<void> {
    await this.cut(db, windows, await this.widen(db, windows));
  }

  /** Each window widened to the stored visits of its key that reach within the timeout of it. */
  private async widen(db: string, windows: VisitWindow[]): Promise<VisitWindow[]> {
    const touched = new Map((await this.windows(touchedSpans(db, windows, this.timeoutMicros))).map((w) => [w.key, w]));
    return windows.map((w) => {
      const t = touched.get(w.key);
      if (!t) return w;
      return { key: w.key, from: BigInt(t.from) < BigInt(w.from) ? t.from : w.from, to: BigInt(t.to) > BigInt(w.to) ? t.to : w.to };
    });
  }

  private cut(db: string, windows: VisitWindow[], widened: VisitWindow[]): Promise<void> {
    return this.command(rebuildVisits(db, windows, widened, this.timeoutMicros));
  }

  private async windows(statement: Statement): Promise<VisitWindow[]> {
    return (await this.query(statement)).map((r) => ({ key: String(r.key), from: String(r.from), to: String(r.to) }));
  }

  private command(statement: Statement): Promise<void> {
    return this.storage.command(statement.sql, statement.params, 'background');
  }

  private query(statement: Statement) {
    return this.storage.query(statement.sql, statement.params, 'background');
  }
}
