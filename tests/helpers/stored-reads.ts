import { FastReads } from '../../src/properties/fast-reads';
import { readColumnName } from '../../src/properties/json-read';
import { ReadColumns } from '../../src/properties/read-columns';
import { silentLogger } from '../../src/log';
import type { Sandbox } from '../../src/storage/storage';
import { eventually } from './eventually';
import type { TestService } from './test-service';

/**
 * What the property-read tests need beside the service: which reads of a workspace have columns
 * (in the events table and in the view), a wait for their materialization, and a FastReads of
 * their own over the service's storage, to see the statement it would run.
 */

/** The read columns of `database`'s `table`. */
export async function readColumnsOf(svc: TestService, database: string, table = 'events'): Promise<string[]> {
  const rows = await svc.storage.query(
    "SELECT name FROM system.columns WHERE database = {database:String} AND table = {table:String} AND startsWith(name, 'property_read_') ORDER BY name",
    { database, table },
  );
  return rows.map((r) => String(r.name));
}

/** Waits until each of `signatures` has its column in the events table and the view, filled in every part. */
export async function waitForStoredReads(svc: TestService, database: string, signatures: readonly string[], limitMs = 30_000): Promise<void> {
  const wanted = signatures.map(readColumnName);
  await eventually(
    `columns for ${signatures.join(', ')}`,
    async () => {
      const [events, view] = await Promise.all([readColumnsOf(svc, database), readColumnsOf(svc, database, 'events_with_persons')]);
      if (!wanted.every((name) => events.includes(name) && view.includes(name))) return false;
      const [pending] = await svc.storage.query('SELECT count() AS n FROM system.mutations WHERE database = {database:String} AND NOT is_done', { database });
      return Number(pending!.n) === 0;
    },
    limitMs,
  );
}

/** A FastReads over the service's storage (columns added by the service are found in the table), and a sandbox for it. */
export function fastReadsOf(svc: TestService): { fastReads: FastReads; sandbox: Sandbox; close(): Promise<void> } {
  const columns = new ReadColumns(svc.storage, { cluster: '', maxColumns: 0, refreshMs: 0 }, silentLogger);
  const sandbox = svc.storage.openSandbox({ timeoutMs: 30_000, maxResultRows: 100_000, maxResultBytes: 64 * 1024 * 1024, maxMemoryBytes: 1024 ** 3 });
  return { fastReads: new FastReads(svc.storage, columns, silentLogger), sandbox, close: () => sandbox.close() };
}
