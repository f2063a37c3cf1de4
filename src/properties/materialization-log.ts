import type { Logger } from '../log';
import type { Storage } from '../storage/storage';
import { WEB_EVENT_COLUMNS } from '../storage/migrations/visits';
import { READ_COLUMN_PREFIX } from './json-read';

/** How often a materialization's progress is looked at and logged. */
const PROGRESS_POLL_MS = 2000;

/**
 * The log of the mutations that fill a new read column for the parts stored before it
 * (read-columns.ts), and the web-analytics columns migrations add (src/storage/migrations/visits.ts):
 * started, or resumed at a start that finds one unfinished, the parts left whenever that changes,
 * done. The engine carries the mutations on by itself, also after a restart; this only tells how
 * they go.
 */
export class MaterializationLog {
  private readonly watched = new Set<string>();
  private readonly stopped = new AbortController();

  constructor(
    private readonly storage: Storage,
    private readonly log: Logger,
  ) {}

  /** Logs the materialization of `column` in `database`, just started, until it is done. */
  started(database: string, column: string): void {
    this.watch(database, column, 'started');
  }

  /**
   * Logs the materializations of read columns and of the web-analytics columns left unfinished in
   * `databases` (by an earlier run, or by the migrations just applied); answers them (`<database>.<column>`).
   */
  async resume(databases: readonly string[]): Promise<ReadonlySet<string>> {
    if (databases.length === 0) return new Set();
    const rows = await this.storage.query(
      `SELECT DISTINCT database, extract(command, {pattern:String}) AS name FROM system.mutations
       WHERE NOT is_done AND database IN {databases:Array(String)} AND name != ''`,
      { databases: [...databases], pattern: `MATERIALIZE COLUMN (${[`${READ_COLUMN_PREFIX}[0-9a-f]{16}`, ...WEB_EVENT_COLUMNS].join('|')})` },
    );
    for (const row of rows) this.watch(String(row.database), String(row.name), 'resumed');
    return new Set(rows.map((row) => `${row.database}.${row.name}`));
  }

  close(): void {
    this.stopped.abort();
  }

  private watch(database: string, column: string, how: 'started' | 'resumed'): void {
    const key = `${database}.${column}`;
    if (this.watched.has(key)) return;
    this.watched.add(key);
    const started = performance.now();
    this.log.info(`materialization of a property column ${how}`, { database, column });
    let lastParts = -1;
    const poll = async () => {
      if (this.stopped.signal.aborted) return this.watched.delete(key);
      try {
        const [row] = await this.storage.query(
          `SELECT countIf(NOT is_done) AS pending, sum(parts_to_do) AS parts, any(latest_fail_reason) AS failure FROM system.mutations
           WHERE database = {database:String} AND position(command, {command:String}) > 0`,
          { database, command: `MATERIALIZE COLUMN ${column}` },
        );
        const [pending, parts] = [Number(row?.pending ?? 0), Number(row?.parts ?? 0)];
        if (pending === 0) {
          this.watched.delete(key);
          this.log.info('materialization of a property column done', { database, column, seconds: Math.round((performance.now() - started) / 100) / 10 });
          return;
        }
        if (parts !== lastParts) this.log.info('materialization of a property column in progress', { database, column, partsToDo: parts, failure: row?.failure || undefined });
        lastParts = parts;
      } catch (err) {
        this.log.debug('materialization progress unknown', { database, column, err });
      }
      setTimeout(poll, PROGRESS_POLL_MS).unref?.();
    };
    setTimeout(poll, PROGRESS_POLL_MS).unref?.();
  }
}
