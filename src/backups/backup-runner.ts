import { join } from 'node:path';
import { conflict, notFound } from '../http/problem';
import { identifier, type Storage } from '../storage/storage';
import { engineToIso, nowMicros, toIsoString } from '../timestamps';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { Backup } from './model';

export interface BackupRunnerDeps {
  storage: Storage;
  store: WorkspaceStore;
  metaDatabase: string;
  /** Where the embedded engine writes backups (its `backups.allowed_path`). */
  backupDir: string;
  /** Resolves once every event acknowledged before the call is in the engine (the ingest log's load). */
  ingested(): Promise<void>;
}

/** The engine's words for a backup's state, in ours. */
const STATUS: Record<string, Backup['status']> = { CREATING_BACKUP: 'running', BACKUP_CREATED: 'finished', BACKUP_FAILED: 'failed' };

/** A backup's directory name: when it started, sortable, and unique within the millisecond. */
const backupName = () => `backup-${toIsoString(nowMicros()).replace(/[:.]/g, '-')}-${crypto.randomUUID().slice(0, 8)}`;

/**
 * Backups of the embedded engine with its own `BACKUP ... TO File(...)`, made while the service
 * runs: the engine takes each table's parts as they are when it gets to the table (so every event
 * acknowledged before the backup began is in it, once the ingest log has loaded it) and copies them in the background (ASYNC), while
 * ingestion and reads go on. The backup holds the metadata database (workspaces, key hashes,
 * webhooks, regulations, suppressions) and every workspace database, in one statement.
 * Its status is the engine's (`system.backups`), kept by the process that made it.
 */
export class BackupRunner {
  /** The databases of each backup this process started, by id (the engine does not list them). */
  private readonly started = new Map<string, { path: string; databases: string[] }>();

  constructor(private readonly deps: BackupRunnerDeps) {}

  async start(): Promise<Backup> {
    if (this.deps.storage.mode !== 'embedded') {
      throw conflict(
        "this service stores its data on a ClickHouse server: back it up there, with the server's BACKUP DATABASE ... TO Disk(...) or S3(...) (see docs/operations.md#backups)",
      );
    }
    await this.deps.ingested();
    const databases = [this.deps.metaDatabase, ...this.deps.store.list().map((w) => w.databaseName)];
    const path = join(this.deps.backupDir, backupName());
    // The path is ours (the configured directory has no quotes; config.ts checks it) and the
    // names are checked identifiers.
    const rows = await this.deps.storage.query(
      `BACKUP ${databases.map((d) => `DATABASE ${identifier(d)}`).join(', ')} TO File('${path}') ASYNC`,
      {},
      'background',
    );
    const id = String(rows[0]?.id);
    this.started.set(id, { path, databases });
    return this.get(id);
  }

  async get(id: string): Promise<Backup> {
    const mine = this.started.get(id);
    if (!mine) throw notFound(`no backup ${id} made by this process`);
    const rows = await this.deps.storage.query(
      'SELECT status, error, num_files AS files, total_size AS bytes, start_time AS startedAt, end_time AS finishedAt FROM system.backups WHERE id = {id:String}',
      // On a read session: the background one may be busy with an erasure for minutes.
      { id },
      'read',
    );
    const row = rows[0];
    if (!row) throw notFound(`no backup ${id} made by this process`);
    const status = STATUS[String(row.status)] ?? 'failed';
    return {
      id,
      path: mine.path,
      databases: mine.databases,
      status,
      ...(row.error ? { error: String(row.error) } : {}),
      files: Number(row.files),
      bytes: Number(row.bytes),
      startedAt: engineToIso(String(row.startedAt)),
      ...(status !== 'running' ? { finishedAt: engineToIso(String(row.finishedAt)) } : {}),
    };
  }
}
