import { createHash, timingSafeEqual } from 'node:crypto';
import { engineToIso, nowMicros, toEngineDateTime } from '../events/timestamps';
import type { Logger } from '../log';
import { metaMigrations } from '../storage/migrations/meta';
import type { MigrationRunner } from '../storage/migrations/runner';
import { workspaceMigrations } from '../storage/migrations/workspace';
import { identifier, type Row, type Storage } from '../storage/storage';
import type { Workspace } from './model';

/** What a key may do: public sends events; private reads its workspace; admin also manages workspaces. */
export type KeyKind = 'public' | 'private' | 'admin';

/** The caller behind a key. */
export interface Principal {
  workspace: Workspace;
  kind: KeyKind;
}

export interface WorkspaceStoreOptions {
  metaDatabase: string;
  defaultWorkspaceDatabase: string;
  /** The default workspace's keys from the environment; the private ones are admin keys. */
  publicApiKeys: readonly string[];
  privateApiKeys: readonly string[];
}

interface KeyEntry {
  hash: Buffer;
  workspaceId: string;
  kind: KeyKind;
}

function sha256(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

function toWorkspace(row: Row): Workspace {
  const properties = String(row.properties);
  return {
    workspaceId: String(row.workspaceId),
    name: String(row.name),
    isDefault: Boolean(row.isDefault),
    databaseName: String(row.databaseName),
    createdAt: engineToIso(String(row.createdAt)),
    ...(properties ? { properties: JSON.parse(properties) as Record<string, unknown> } : {}),
  };
}

/**
 * Owns workspace and key metadata: stored in the metadata database, served from memory. Keys
 * are held as SHA-256 hashes and looked up by hash, then compared in constant time.
 */
export class WorkspaceStore {
  private readonly workspaces = new Map<string, Workspace>();
  private readonly keys = new Map<string, KeyEntry>();
  private readonly meta: string;

  constructor(
    private readonly storage: Storage,
    private readonly migrations: MigrationRunner,
    private readonly options: WorkspaceStoreOptions,
    private readonly log: Logger,
  ) {
    this.meta = identifier(options.metaDatabase);
  }

  /** Migrates the metadata database and every workspace database; creates the default workspace. */
  async start(): Promise<void> {
    await this.migrations.bootstrap();
    await this.migrations.apply(this.options.metaDatabase, metaMigrations);
    await this.load();
    if (![...this.workspaces.values()].some((w) => w.isDefault)) await this.createDefault();
    for (const w of this.workspaces.values()) await this.migrations.apply(w.databaseName, workspaceMigrations);
    const fallback = this.defaultWorkspace;
    for (const key of this.options.publicApiKeys) this.addKey(key, fallback.workspaceId, 'public');
    for (const key of this.options.privateApiKeys) this.addKey(key, fallback.workspaceId, 'admin');
  }

  get defaultWorkspace(): Workspace {
    for (const w of this.workspaces.values()) if (w.isDefault) return w;
    throw new Error('no default workspace (start() has not run)');
  }

  /** The caller behind `key`, or undefined for an unknown key. */
  resolve(key: string): Principal | undefined {
    const hash = sha256(key);
    const entry = this.keys.get(hash.toString('hex'));
    if (!entry || !timingSafeEqual(entry.hash, hash)) return undefined;
    const workspace = this.workspaces.get(entry.workspaceId);
    return workspace && { workspace, kind: entry.kind };
  }

  private addKey(key: string, workspaceId: string, kind: KeyKind): void {
    const hash = sha256(key);
    this.keys.set(hash.toString('hex'), { hash, workspaceId, kind });
  }

  private async load(): Promise<void> {
    const rows = await this.storage.query(`SELECT * FROM ${this.meta}.workspaces FINAL`, {}, 'write');
    this.workspaces.clear();
    for (const row of rows) {
      const w = toWorkspace(row);
      this.workspaces.set(w.workspaceId, w);
    }
  }

  private async createDefault(): Promise<void> {
    const now = nowMicros();
    const workspace: Workspace = {
      workspaceId: crypto.randomUUID(),
      name: 'Default',
      isDefault: true,
      databaseName: this.options.defaultWorkspaceDatabase,
      createdAt: engineToIso(toEngineDateTime(now)),
    };
    await this.storage.command(
      `INSERT INTO ${this.meta}.workspaces (workspaceId, name, databaseName, isDefault, properties, createdAt, version, isDeleted)
       VALUES ({workspaceId:String}, {name:String}, {databaseName:String}, true, '', {createdAt:DateTime64(6, 'UTC')}, {version:UInt64}, 0)`,
      {
        workspaceId: workspace.workspaceId,
        name: workspace.name,
        databaseName: workspace.databaseName,
        createdAt: toEngineDateTime(now),
        version: Number(now),
      },
    );
    this.workspaces.set(workspace.workspaceId, workspace);
    this.log.info('default workspace created', { workspaceId: workspace.workspaceId, databaseName: workspace.databaseName });
  }
}
