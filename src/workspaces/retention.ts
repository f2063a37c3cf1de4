import type { MigrationRunner } from '../storage/migrations/runner';
import { StorageQueryError } from '../storage/storage';

/** ClickHouse's BAD_ARGUMENTS, which REMOVE TTL answers for a table that has no TTL. */
const BAD_ARGUMENTS = 36;

/**
 * Gives a workspace's `events` table (and its `visits`, `catalog`, `violations` and `quarantine`) the TTL of its retention period: rows whose `timestamp` is
 * older than `days` go at the engine's merges. By `timestamp` rather than `parsedAt`: retention
 * is about how old the recorded activity is, so backfilled (imported) events expire by their own
 * time like the others, and the sorting key leads with `timestamp`, so expired rows sit together.
 *
 * Only the table's metadata changes here (`materialize_ttl_after_modify = 0`): nothing is
 * rewritten in the request. `materialize` then queues `MATERIALIZE TTL` as a background mutation
 * (it returns at once), which applies the new period to the parts written before it.
 */
export async function applyRetention(migrations: MigrationRunner, database: string, days: number, materialize: boolean): Promise<void> {
  if (!Number.isInteger(days) || days < 0) throw new Error(`invalid retention ${days}`);
  // Stored visits go with their last event: a visit is kept while any of its events is. A day of
  // the catalog, and of the tracking plan's violations, goes with the last of its events; a
  // quarantined event by its arrival (the events' timestamp is not a column there).
  const tables = [[migrations.eventsTable, 'timestamp'], [migrations.visitsTable, 'end'], ['catalog', 'day + INTERVAL 1 DAY'], ['violations', 'day + INTERVAL 1 DAY'], ['quarantine', 'quarantinedAt']] as const;
  for (const [table, column] of tables) {
    if (days === 0) {
      await migrations.alterTable(database, table, 'REMOVE TTL').catch((err) => {
        if (!(err instanceof StorageQueryError && err.clickhouseCode === BAD_ARGUMENTS)) throw err;
      });
      continue;
    }
    await migrations.alterTable(database, table, `MODIFY TTL ${column} + INTERVAL ${days} DAY SETTINGS materialize_ttl_after_modify = 0`);
    if (materialize) await migrations.alterTable(database, table, 'MATERIALIZE TTL SETTINGS mutations_sync = 0');
  }
}
