import { engineToIso, parseIsoDateTime, toEngineDateTime } from '../timestamps';
import { identifier, jsonLines, type Row, type Storage } from '../storage/storage';
import type { KeyRecord } from './api-keys';
import type { Workspace } from './model';

/** A workspace as stored: each change is a new row with a higher `version`. */
export interface WorkspaceVersion {
  workspace: Workspace;
  version: number;
}

function toWorkspace(row: Row): Workspace {
  const properties = String(row.properties);
  return {
    workspaceId: String(row.workspaceId),
    name: String(row.name),
    isDefault: Boolean(row.isDefault),
    databaseName: String(row.databaseName),
    createdAt: engineToIso(String(row.createdAt)),
    retentionDays: Number(row.retentionDays),
    ...(properties ? { properties: JSON.parse(properties) as Record<string, unknown> } : {}),
    allowedOrigins: (row.allowedOrigins as unknown[]).map(String),
    siteDomains: (row.siteDomains as unknown[]).map(String),
    timezone: String(row.timezone),
  };
}

const engineTime = (iso: string) => toEngineDateTime(parseIsoDateTime(iso)!);

/**
 * The SQL of the metadata tables `workspaces` and `api_keys`. Both are ReplacingMergeTree tables
 * read with FINAL: a change inserts a newer version of a row, a deletion one with isDeleted = 1.
 * It runs on the write lane: these statements are small, and must not queue behind long reads.
 */
export class WorkspaceRecords {
  private readonly meta: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
  ) {
    this.meta = identifier(metaDatabase);
  }

  async workspaces(): Promise<WorkspaceVersion[]> {
    const rows = await this.storage.query(
      `SELECT workspaceId, name, databaseName, isDefault, properties, allowedOrigins, siteDomains, timezone, createdAt, retentionDays, version FROM ${this.meta}.workspaces FINAL`,
      {},
      'write',
    );
    return rows.map((row) => ({ workspace: toWorkspace(row), version: Number(row.version) }));
  }

  /**
   * The highest version of any workspace or key row, deleted ones included: how far this node's
   * copy goes (a key rotation writes key rows only).
   */
  async latestVersion(): Promise<bigint> {
    const [row] = await this.storage.query(
      `SELECT toString(greatest((SELECT max(version) FROM ${this.meta}.workspaces), (SELECT max(version) FROM ${this.meta}.api_keys))) AS v`,
      {},
      'write',
    );
    return BigInt(String(row?.v ?? '0'));
  }

  async keys(): Promise<KeyRecord[]> {
    const rows = await this.storage.query(`SELECT keyHash, workspaceId, kind FROM ${this.meta}.api_keys FINAL`, {}, 'write');
    return rows.map((row) => ({ keyHash: String(row.keyHash), workspaceId: String(row.workspaceId), kind: row.kind as KeyRecord['kind'] }));
  }

  /** Writes workspace versions as one insert, so that moving the default is all or nothing. */
  writeWorkspaces(versions: readonly WorkspaceVersion[], deleted = false): Promise<void> {
    return this.storage.insert(
      this.metaDatabase,
      'workspaces',
      jsonLines(versions.map(({ workspace: w, version }) => ({
        workspaceId: w.workspaceId,
        name: w.name,
        databaseName: w.databaseName,
        isDefault: w.isDefault,
        properties: w.properties ? JSON.stringify(w.properties) : '',
        allowedOrigins: w.allowedOrigins,
        siteDomains: w.siteDomains,
        timezone: w.timezone,
        createdAt: engineTime(w.createdAt),
        retentionDays: w.retentionDays,
        version,
        isDeleted: deleted ? 1 : 0,
      }))),
    );
  }

  writeKeys(keys: readonly KeyRecord[], version: number, deleted = false): Promise<void> {
    return deleted ? this.replaceKeys([], keys, version) : this.replaceKeys(keys, [], version);
  }

  /**
   * Adds keys and revokes others as one insert (a rotation), so that every process, and every
   * replica, sees both or neither.
   */
  replaceKeys(added: readonly KeyRecord[], revoked: readonly KeyRecord[], version: number): Promise<void> {
    const createdAt = toEngineDateTime(BigInt(version));
    const row = (k: KeyRecord, isDeleted: number) => ({ keyHash: k.keyHash, workspaceId: k.workspaceId, kind: k.kind, createdAt, version, isDeleted });
    return this.storage.insert(this.metaDatabase, 'api_keys', jsonLines([...added.map((k) => row(k, 0)), ...revoked.map((k) => row(k, 1))]));
  }

  /** Whether the engine knows `timezone` by this exact name (its `system.time_zones`). */
  async engineKnowsTimezone(timezone: string): Promise<boolean> {
    const rows = await this.storage.query('SELECT 1 FROM system.time_zones WHERE time_zone = {timezone:String}', { timezone }, 'write');
    return rows.length > 0;
  }

  async databaseExists(name: string): Promise<boolean> {
    const rows = await this.storage.query('SELECT 1 FROM system.databases WHERE name = {name:String}', { name }, 'write');
    return rows.length > 0;
  }

  /**
   * Databases of deleted workspaces that still exist and no live workspace uses: left behind when
   * a DROP failed or the process stopped between deleting a workspace and dropping its database.
   */
  async orphanedDatabases(): Promise<string[]> {
    const rows = await this.storage.query(
      `SELECT databaseName FROM (
         SELECT argMax(databaseName, version) AS databaseName, argMax(isDeleted, version) AS deleted
         FROM ${this.meta}.workspaces GROUP BY workspaceId
       )
       WHERE deleted = 1
         AND databaseName NOT IN (SELECT databaseName FROM ${this.meta}.workspaces FINAL)
         AND databaseName IN (SELECT name FROM system.databases)`,
      {},
      'write',
    );
    return [...new Set(rows.map((r) => String(r.databaseName)))];
  }
}
