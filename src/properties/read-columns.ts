import type { Logger } from '../log';
import { eventsStorageTable } from '../storage/migrations/engines';
import { replacePersonIdView } from '../storage/migrations/persons';
import { migrationTarget } from '../storage/migrations/runner';
import type { Storage } from '../storage/storage';
import { READ_COLUMN_PREFIX, readColumnName } from './json-read';
import { MaterializationLog } from './materialization-log';

/**
 * The columns that store property reads, per workspace (docs/architecture.md#fast-properties):
 * `property_read_<hash> <type> MATERIALIZED <read>` on the events table (on a cluster, on each
 * shard's events_local and on the Distributed events), which `SELECT *` leaves out, and on the
 * `events_with_persons` view, so that reads through it find them. Which exist is read from the
 * table itself, so every process sharing the storage finds those the others added. A column
 * added is filled for the parts stored before it by a mutation in the background, which the engine
 * resumes after a restart and whose progress goes to the log (materialization-log.ts); until it is
 * done those parts compute the read from the JSON text, as before.
 */

/**
 * Result types a stored read may have (its column is declared with the type the engine gave the
 * read, so only types whose text is known): scalars, Nullable scalars, and JSONType's enum.
 */
const SCALAR = 'String|Bool|U?Int(?:8|16|32|64)|Float(?:32|64)';
const STORABLE_TYPE = new RegExp(`^(?:${SCALAR}|Nullable\\((?:${SCALAR})\\))$`);
const JSON_TYPE_ENUM = "Enum8('Null' = 0, 'String' = 34, 'Array' = 91, 'Bool' = 98, 'Double' = 100, 'Int64' = 105, 'UInt64' = 117, 'Object' = 123)";
/** Reads longer than this (keys of kilobytes) are not worth a column. */
const MAX_SIGNATURE_CHARS = 1000;

export interface ReadColumnsOptions {
  /** CLICKHOUSE_CLUSTER, or ''. */
  cluster: string;
  /** Columns per workspace, at most (PROPERTY_COLUMNS_MAX); 0 stores none. */
  maxColumns: number;
  /** How long what the table says is taken as known before it is read again (other processes add columns too). */
  refreshMs: number;
}

export class ReadColumns {
  private readonly known = new Map<string, { names: Set<string>; readAt: number }>();
  /** Per database, the last of its changes (columns added, the view replaced): they run one after another. */
  private readonly changes = new Map<string, Promise<void>>();
  private readonly progress: MaterializationLog;

  constructor(
    private readonly storage: Storage,
    private readonly options: ReadColumnsOptions,
    private readonly log: Logger,
  ) {
    this.progress = new MaterializationLog(storage, log);
  }

  /**
   * The read columns of `database`'s events. A view found without some of them (replaced by
   * another process at the same moment) is replaced again, in the background.
   */
  async names(database: string): Promise<ReadonlySet<string>> {
    const known = this.known.get(database);
    if (known && performance.now() - known.readAt < this.options.refreshMs) return known.names;
    const rows = await this.storage.query(
      `SELECT table, name FROM system.columns WHERE database = {database:String} AND table IN ('events', 'events_with_persons')
       AND default_kind = 'MATERIALIZED' AND startsWith(name, {prefix:String})`,
      { database, prefix: READ_COLUMN_PREFIX },
    );
    const names = new Set(rows.filter((r) => r.table === 'events').map((r) => String(r.name)));
    if (rows.filter((r) => r.table === 'events_with_persons').length < names.size) {
      this.serially(database, () => this.replaceView(database)).catch((err) => this.log.warn('events_with_persons could not be replaced', { database, err }));
    }
    this.known.set(database, { names, readAt: performance.now() });
    return names;
  }

  /** Whether a read of `type` with this signature may be stored. */
  storable(signature: string, type: string): boolean {
    return this.options.maxColumns > 0 && signature.length <= MAX_SIGNATURE_CHARS && (STORABLE_TYPE.test(type) || type === JSON_TYPE_ENUM);
  }

  /**
   * Adds the column storing the read `signature` (result type `type`), unless `database` has
   * `maxColumns` already; resolves once reads can use it (the parts stored before it are filled in
   * the background).
   */
  add(database: string, signature: string, type: string): Promise<void> {
    return this.serially(database, () => this.addColumn(database, signature, type));
  }

  /**
   * Logs the progress of materializations left unfinished by an earlier run (the engine carries
   * them on), and starts those an earlier run never started: a stop between a column's ADD and its
   * MATERIALIZE leaves the parts stored before it computing the read from the JSON at every read
   * (right, but as slow as no column), for good. Such a column is one that some active part of
   * the events lacks while no mutation is filling it. On a cluster the parts looked at are this
   * server's; the MATERIALIZE, as the ADD, goes to every shard.
   */
  async resume(databases: readonly string[]): Promise<void> {
    const filling = await this.progress.resume(databases);
    if (databases.length === 0) return;
    // One read for every workspace: each read column with the active parts that lack it.
    const rows = await this.storage.query(
      `SELECT c.database AS database, c.name AS name, any(t.parts) - countIf(p.column != '') AS without FROM system.columns AS c
       LEFT JOIN (SELECT database, column FROM system.parts_columns WHERE database IN {databases:Array(String)} AND table = {table:String} AND active) AS p
         ON p.database = c.database AND p.column = c.name
       LEFT JOIN (SELECT database, count() AS parts FROM system.parts WHERE database IN {databases:Array(String)} AND table = {table:String} AND active GROUP BY database) AS t
         ON t.database = c.database
       WHERE c.database IN {databases:Array(String)} AND c.table = {table:String} AND c.default_kind = 'MATERIALIZED' AND startsWith(c.name, {prefix:String})
       GROUP BY c.database, c.name HAVING without > 0`,
      { databases: [...databases], table: eventsStorageTable(this.options.cluster), prefix: READ_COLUMN_PREFIX },
    );
    for (const row of rows) {
      const [database, name] = [String(row.database), String(row.name)];
      if (filling.has(`${database}.${name}`)) continue;
      this.log.warn('property column never filled (the service stopped while adding it): filling it now', { database, column: name, partsWithout: Number(row.without) });
      await this.materialize(database, name);
    }
  }

  /** Forgets what it knows of databases not in `databases` (deleted workspaces). */
  retainOnly(databases: ReadonlySet<string>): void {
    for (const database of this.known.keys()) if (!databases.has(database)) this.known.delete(database);
  }

  close(): void {
    this.progress.close();
  }

  private serially(database: string, change: () => Promise<void>): Promise<void> {
    const next = (this.changes.get(database) ?? Promise.resolve()).catch(() => undefined).then(change);
    this.changes.set(database, next);
    void next.finally(() => this.changes.get(database) === next && this.changes.delete(database)).catch(() => undefined);
    return next;
  }

  private async addColumn(database: string, signature: string, type: string): Promise<void> {
    const name = readColumnName(signature);
    const names = await this.names(database);
    if (names.has(name)) return;
    if (names.size >= this.options.maxColumns) {
      this.log.debug('property read not stored: the workspace has its most columns', { database, read: signature, max: this.options.maxColumns });
      return;
    }
    const { db, onCluster } = migrationTarget(database, this.options.cluster);
    const on = onCluster ? ` ${onCluster}` : '';
    const stored = `${db}.${eventsStorageTable(this.options.cluster)}${on}`;
    const column = `ADD COLUMN IF NOT EXISTS ${name} ${type} MATERIALIZED ${signature}`;
    await this.storage.command(`ALTER TABLE ${stored} ${column}`);
    // Filled at once: the shorter the time between the two, the less a stop can leave unfilled (resume() fills what it did).
    await this.materialize(database, name);
    // The Distributed table needs the column too, to send reads of it to the shards.
    if (this.options.cluster) await this.storage.command(`ALTER TABLE ${db}.events${on} ${column}`);
    await this.replaceView(database);
    this.known.delete(database);
    this.log.info('property read stored in a column', { database, column: name, read: signature });
  }

  /** Fills `column` for the parts stored before it, in the background (a mutation), its progress logged. */
  private async materialize(database: string, column: string): Promise<void> {
    const { db, onCluster } = migrationTarget(database, this.options.cluster);
    const on = onCluster ? ` ${onCluster}` : '';
    await this.storage.command(`ALTER TABLE ${db}.${eventsStorageTable(this.options.cluster)}${on} MATERIALIZE COLUMN ${column} SETTINGS mutations_sync = 0`);
    this.progress.started(database, column);
  }

  /** Replaces `events_with_persons` with one that has every column of the events table, the read columns hidden. */
  private async replaceView(database: string): Promise<void> {
    await replacePersonIdView(this.storage, migrationTarget(database, this.options.cluster));
  }
}
