import type { Logger } from '../../log';
import { identifier, identifierName, type Storage } from '../storage';
import { eventsStorageTable, metadataEngine } from './engines';
import { PERSON_ID_VIEW, replacePersonIdView } from './persons';
import { visitsStorageTable } from './visits';

export interface MigrationTarget {
  /** The database, already quoted. */
  db: string;
  /** The database's name, unquoted (checked), for engine arguments. */
  dbName: string;
  /** `ON CLUSTER ...` when a cluster is configured, else ''. */
  onCluster: string;
  /** The cluster's name (checked), or '' without one. */
  cluster: string;
  /** A metadata table's engine: `engine(args)`, replicated on every node on a cluster. */
  engine(engine: string, args?: string): string;
}

export interface Migration {
  version: number;
  name: string;
  /** Idempotent statements (IF NOT EXISTS), so a migration cut short can simply run again. */
  statements(target: MigrationTarget): string[];
}

/** The target of `database` in the layout of `cluster` (CLICKHOUSE_CLUSTER, or '' for none). */
export function migrationTarget(database: string, cluster: string): MigrationTarget {
  return {
    db: identifier(database),
    dbName: identifierName(database),
    onCluster: cluster ? `ON CLUSTER ${identifier(cluster)}` : '',
    cluster,
    engine: (engine, args) => metadataEngine(cluster !== '', engine, args),
  };
}

/** The target of `database` without a cluster (a database's plain layout). */
export const plainTarget = (database: string): MigrationTarget => migrationTarget(database, '');

/**
 * A migration's checksum is over its text for the plain layout, whatever the layout it is applied
 * in: the layout follows configuration, the checksum guards the schema's history.
 */
async function checksum(migration: Migration): Promise<string> {
  const text = migration
    .statements({ db: '{db}', dbName: '{db}', onCluster: '{cluster}', cluster: '', engine: (engine, args) => metadataEngine(false, engine, args) })
    .join(';\n');
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Buffer.from(digest).toString('hex');
}

/**
 * Applies versioned migrations to one database and records each in the metadata database's
 * `schema_migrations`. A recorded migration whose text has since changed stops the start: the
 * schema in storage would no longer be the one the code describes.
 */
export class MigrationRunner {
  private readonly meta: string;
  /** `ON CLUSTER ...` when a cluster is configured, else '': for other DDL-like statements (lightweight DELETE). */
  readonly onCluster: string;
  /** The table that stores a workspace's events (ALTER and DELETE go there): `events_local` on a cluster. */
  readonly eventsTable: string;
  /** The table that stores a workspace's visits: `visits_local` on a cluster. */
  readonly visitsTable: string;

  constructor(
    private readonly storage: Storage,
    metaDatabase: string,
    private readonly cluster: string,
    private readonly log: Logger,
  ) {
    this.meta = identifier(metaDatabase);
    this.onCluster = cluster ? `ON CLUSTER ${identifier(cluster)}` : '';
    this.eventsTable = eventsStorageTable(cluster);
    this.visitsTable = visitsStorageTable(cluster);
  }

  /** Creates the metadata database and its migration ledger. */
  async bootstrap(): Promise<void> {
    await this.storage.command(`CREATE DATABASE IF NOT EXISTS ${this.meta} ${this.onCluster}`);
    await this.storage.command(
      `CREATE TABLE IF NOT EXISTS ${this.meta}.schema_migrations ${this.onCluster} (
        database String,
        version UInt32,
        name String,
        checksum String,
        appliedAt DateTime64(3, 'UTC') DEFAULT now64(3)
      ) ENGINE = ${metadataEngine(this.cluster !== '', 'MergeTree')} ORDER BY (database, version)`,
    );
  }

  /** Creates `database` if needed and applies the migrations it has not had yet, in order. */
  /**
   * Sets MergeTree settings of `database.table` that depend on configuration rather than on the
   * schema's history (so they are not migrations): applied at every start, idempotent.
   */
  async setTableSettings(database: string, table: string, settings: Record<string, number>): Promise<void> {
    const assignments = Object.entries(settings).map(([name, value]) => `${identifierName(name)} = ${Number(value)}`);
    await this.alterTable(database, table, `MODIFY SETTING ${assignments.join(', ')}`);
  }

  /** `ALTER TABLE database.table <clause>`, on the cluster when one is configured. The clause is the caller's own SQL, never user text. */
  async alterTable(database: string, table: string, clause: string): Promise<void> {
    await this.storage.command(`ALTER TABLE ${identifier(database)}.${identifier(table)} ${this.onCluster} ${clause}`);
  }

  /**
   * Makes views whose text follows the code rather than the schema's history (each statement a
   * CREATE OR REPLACE VIEW of `database`), at every start: no checksum guards them.
   */
  async replaceViews(database: string, views: ReadonlyArray<(target: MigrationTarget) => string>): Promise<void> {
    const target = migrationTarget(database, this.cluster);
    for (const view of views) await this.storage.command(view(target));
  }

  /**
   * Makes `events_with_persons` show every MATERIALIZED column of `database`'s events (the
   * web-analytics columns migrations add, say), replacing it when it lacks one (replacePersonIdView).
   */
  async completePersonIdView(database: string): Promise<void> {
    const rows = await this.storage.query(
      `SELECT name FROM system.columns WHERE database = {database:String} AND table = 'events' AND default_kind = 'MATERIALIZED'
       AND name NOT IN (SELECT name FROM system.columns WHERE database = {database:String} AND table = {view:String})`,
      { database, view: PERSON_ID_VIEW },
      'write',
    );
    if (rows.length > 0) await replacePersonIdView(this.storage, migrationTarget(database, this.cluster));
  }

  async apply(database: string, migrations: readonly Migration[]): Promise<void> {
    const target = migrationTarget(database, this.cluster);
    await this.storage.command(`CREATE DATABASE IF NOT EXISTS ${target.db} ${this.onCluster}`);
    const applied = new Map<number, string>();
    const rows = await this.storage.query(
      `SELECT version, any(checksum) AS checksum FROM ${this.meta}.schema_migrations WHERE database = {database:String} GROUP BY version`,
      { database },
      'write',
    );
    for (const row of rows) applied.set(Number(row.version), String(row.checksum));
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      const sum = await checksum(migration);
      const recorded = applied.get(migration.version);
      if (recorded !== undefined) {
        if (recorded !== sum) {
          throw new Error(`migration ${migration.version} (${migration.name}) of ${database} was changed after it was applied`);
        }
        continue;
      }
      for (const statement of migration.statements(target)) await this.storage.command(statement);
      await this.storage.command(
        `INSERT INTO ${this.meta}.schema_migrations (database, version, name, checksum) VALUES ({database:String}, {version:UInt32}, {name:String}, {checksum:String})`,
        { database, version: migration.version, name: migration.name, checksum: sum },
      );
      this.log.info('migration applied', { database, version: migration.version, name: migration.name });
    }
  }

  /**
   * Drops a database and forgets its migrations, so a new database of the same name is migrated
   * from the start. The ledger goes first: if the drop then fails, the leftover database still
   * exists and keeps its name taken until it is dropped, so its old tables are never adopted.
   */
  async dropDatabase(database: string): Promise<void> {
    // Not ON CLUSTER: without a cluster there is none, and a replicated ledger replicates its own mutations.
    await this.storage.command(`DELETE FROM ${this.meta}.schema_migrations WHERE database = {database:String}`, { database });
    await this.storage.command(`DROP DATABASE IF EXISTS ${identifier(database)} ${this.onCluster} SYNC`);
    await this.storage.forgetDatabase(database);
  }
}
