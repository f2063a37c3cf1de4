import { Actor } from '../actors/actor';
import { ChangeCounter } from '../coordination/change-counter';
import { toIsoString } from '../timestamps';
import { conflict, invalidInput, notFound } from '../http/problem';
import type { Logger } from '../log';
import { MonotonicClock } from '../monotonic-clock';
import { metaMigrations } from '../storage/migrations/meta';
import type { MigrationRunner } from '../storage/migrations/runner';
import { workspaceMigrations } from '../storage/migrations/workspace';
import { firstTouchView } from '../persons/first-touch';
import type { Storage } from '../storage/storage';
import { generateKey, hashKey, KeyRing, type KeyKind, type KeyRecord } from './api-keys';
import { databaseNameFor, withRandomSuffix } from './database-names';
import { normalizeOrigin } from '../http/origins';
import { checkTimezone } from '../insights/time-range';
import { ANY_ORIGIN, DEFAULT_TIMEZONE, TIMEZONE_RULE, type CreatedWorkspace, type RotatedKey, type Workspace, type WorkspaceInput } from './model';
import { applyRetention } from './retention';
import { WorkspaceRecords, type WorkspaceVersion } from './workspace-records';

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
  /** How often workspaces and keys are re-read in full, to see changes made by other processes. */
  refreshMs: number;
  /**
   * How often the metadata change counter is read (server mode), so that other processes'
   * changes are seen within about this long; absent: only the full re-read.
   */
  changePollMs?: number;
  /** Whether each insert into a workspace's events is flushed to disk before it is acknowledged. */
  ingestFsync: boolean;
  /** Retention of a workspace created without one (days; 0 keeps events forever). */
  retentionDays: number;
}

/** Changes waiting for the store, at most; beyond it callers get 503. */
const MAILBOX_CAPACITY = 1000;
/** Tries at a free derived database name before giving up. */
const NAME_ATTEMPTS = 5;

type Work = () => Promise<unknown>;

/** Origins as browsers send them (validated already), each once: `https://Example.com:443/` is `https://example.com`. */
const normalizeOrigins = (origins: readonly string[]) => [...new Set(origins.map((o) => (o === '*' ? o : normalizeOrigin(o)!)))];

/**
 * The workspace store actor. It owns workspace and key metadata: stored in the metadata database
 * (shared by every process on the same ClickHouse), served from memory. Changes and reloads run
 * one at a time through its mailbox, so a check such as "this name is free" and the write that
 * relies on it are never interleaved with another change in this process, and a reload never
 * overwrites a change it did not see. Other processes' changes arrive with the periodic reload.
 */
export class WorkspaceStore {
  private workspaces = new Map<string, WorkspaceVersion>();
  private keys = new KeyRing();
  private defaultId: string | undefined;
  private readonly versions = new MonotonicClock();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly mailbox = new Actor<Work, unknown>((work) => work(), MAILBOX_CAPACITY);
  private readonly records: WorkspaceRecords;
  private readonly changes: ChangeCounter;
  private readonly removalListeners: Array<(workspace: Workspace) => Promise<void>> = [];
  private readonly databaseListeners: Array<() => void> = [];
  private databaseSet = '';
  /** Workspaces by site domain, made again on first use after any change. */
  private siteDomains: Map<string, Workspace> | undefined;

  constructor(
    storage: Storage,
    private readonly migrations: MigrationRunner,
    private readonly options: WorkspaceStoreOptions,
    private readonly log: Logger,
  ) {
    this.records = new WorkspaceRecords(storage, options.metaDatabase);
    this.changes = new ChangeCounter(storage, options.metaDatabase, 'workspaces', log);
    // One process owns an embedded engine's files: nobody else changes its metadata.
    this.shared = storage.mode === 'server';
  }

  private readonly shared: boolean;

  /** Migrates the metadata database and every workspace database; creates the default workspace. */
  async start(): Promise<void> {
    await this.migrations.bootstrap();
    await this.migrations.apply(this.options.metaDatabase, metaMigrations);
    await this.reload();
    if (!this.defaultId) await this.createDefault();
    for (const { workspace } of this.workspaces.values()) await this.prepareDatabase(workspace);
    await this.dropOrphans();
    this.timer = setInterval(() => this.refresh().catch((err) => this.log.warn('workspace refresh failed', { err })), this.options.refreshMs);
    this.timer.unref();
    if (this.shared && this.options.changePollMs) {
      this.changes.watch(this.options.changePollMs, async (latest) => {
        await this.refresh();
        return (await this.records.latestVersion()) >= latest;
      });
    }
  }

  /** Tells the other processes that workspaces or keys changed; a failure only delays them to their full re-read. */
  private async announce(version: number): Promise<void> {
    if (!this.shared) return;
    await this.changes.bump(version).catch((err) => this.log.warn('change counter not moved; other processes see the change at their next full re-read', { err }));
  }

  /**
   * Brings a workspace database to the current schema and views, with the configured durability and the
   * workspace's retention (again at each start, in case a change was cut short before its ALTER).
   */
  private async prepareDatabase(workspace: Workspace): Promise<void> {
    const { databaseName } = workspace;
    await this.migrations.apply(databaseName, workspaceMigrations);
    await this.migrations.completePersonIdView(databaseName);
    await this.migrations.replaceViews(databaseName, [firstTouchView]);
    const fsync = this.options.ingestFsync ? 1 : 0;
    await this.migrations.setTableSettings(databaseName, this.migrations.eventsTable, { fsync_after_insert: fsync, fsync_part_directory: fsync });
    await applyRetention(this.migrations, databaseName, workspace.retentionDays, false);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.changes.stop();
    await this.mailbox.stop();
  }

  get defaultWorkspace(): Workspace {
    const entry = this.defaultId && this.workspaces.get(this.defaultId);
    if (!entry) throw new Error('no default workspace (start() has not run)');
    return entry.workspace;
  }

  /** The caller behind `key`, or undefined for an unknown or revoked key. */
  resolve(key: string): Principal | undefined {
    const grant = this.keys.find(key);
    if (!grant) return undefined;
    const workspace = grant.workspaceId === null ? this.defaultWorkspace : this.workspaces.get(grant.workspaceId)?.workspace;
    return workspace && { workspace, kind: grant.kind };
  }

  /** Every workspace, oldest first. */
  list(): Workspace[] {
    return [...this.workspaces.values()]
      .map((v) => v.workspace)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.workspaceId.localeCompare(b.workspaceId));
  }

  get(workspaceId: string): Workspace {
    const workspace = this.find(workspaceId);
    if (!workspace) throw notFound(`no workspace ${workspaceId}`);
    return workspace;
  }

  find(workspaceId: string): Workspace | undefined {
    return this.workspaces.get(workspaceId)?.workspace;
  }

  /** Runs `listener` whenever the set of workspace databases has changed (here or, seen on a refresh, elsewhere). */
  onDatabasesChanged(listener: () => void): void {
    this.databaseListeners.push(listener);
  }

  /** Runs `listener` when this process deletes a workspace, after its keys are revoked. */
  onRemove(listener: (workspace: Workspace) => Promise<void>): void {
    this.removalListeners.push(listener);
  }

  /** Re-reads workspaces and keys, and drops databases that deleted workspaces left behind. */
  refresh(): Promise<void> {
    return this.exclusive(async () => {
      await this.reload();
      await this.dropOrphans();
    });
  }

  /** Creates the workspace, its keys and its database; the keys are returned this once. */
  create(input: WorkspaceInput): Promise<CreatedWorkspace> {
    return this.exclusive(async () => {
      await this.reload();
      const name = input.name.trim();
      this.checkNameFree(name);
      const timezone = await this.knownTimezone(input.timezone ?? DEFAULT_TIMEZONE);
      const databaseName = input.databaseName ?? (await this.freeDerivedName(name));
      if (input.databaseName !== undefined) await this.checkDatabaseFree(databaseName);
      const version = this.nextVersion();
      const workspace: Workspace = {
        workspaceId: crypto.randomUUID(),
        name,
        isDefault: input.isDefault ?? false,
        databaseName,
        createdAt: toIsoString(BigInt(version)),
        ...(input.properties ? { properties: input.properties } : {}),
        allowedOrigins: normalizeOrigins(input.allowedOrigins ?? ANY_ORIGIN),
        siteDomains: this.freeSiteDomains(input.siteDomains ?? []),
        retentionDays: input.retentionDays ?? this.options.retentionDays,
        timezone,
      };
      const publicApiKey = generateKey('public');
      const privateApiKey = generateKey('private');
      const keys: KeyRecord[] = [
        { keyHash: hashKey(publicApiKey).toString('hex'), workspaceId: workspace.workspaceId, kind: 'public' },
        { keyHash: hashKey(privateApiKey).toString('hex'), workspaceId: workspace.workspaceId, kind: 'private' },
      ];
      const written = this.withDefaultMoved({ workspace, version });
      // The rows go first, so that a database only ever exists for a recorded workspace: if the
      // process stops before the database is made, the next start makes it.
      await this.records.writeKeys(keys, version);
      await this.records.writeWorkspaces(written);
      try {
        await this.prepareDatabase(workspace);
      } catch (err) {
        await this.records.writeWorkspaces([{ workspace, version: this.nextVersion() }], true).catch(() => {});
        throw err;
      }
      this.remember(written);
      for (const k of keys) this.keys.add(Buffer.from(k.keyHash, 'hex'), { workspaceId: workspace.workspaceId, kind: k.kind });
      await this.announce(version);
      this.log.info('workspace created', { workspaceId: workspace.workspaceId, databaseName });
      return { ...workspace, publicApiKey, privateApiKey };
    });
  }

  /**
   * Replaces name, properties, isDefault and allowedOrigins, and retentionDays when given (its
   * new TTL applies in the background). `databaseName` cannot change. The default workspace stays
   * the default until another one is made the default, so `isDefault: false` on it is refused.
   * An absent `isDefault`, `allowedOrigins`, `siteDomains` or `timezone` keeps the current value (a client that knows
   * nothing of allowedOrigins must not open a workspace up).
   */
  update(workspaceId: string, input: WorkspaceInput): Promise<Workspace> {
    return this.exclusive(async () => {
      await this.reload();
      const current = this.get(workspaceId);
      if (input.databaseName !== undefined && input.databaseName !== current.databaseName) {
        throw invalidInput('the database of a workspace cannot change', [
          { pointer: '/databaseName', detail: `is ${current.databaseName} and cannot change` },
        ]);
      }
      if (current.isDefault && input.isDefault === false) {
        throw conflict('this is the default workspace; make another workspace the default instead');
      }
      const name = input.name.trim();
      this.checkNameFree(name, workspaceId);
      const timezone = input.timezone === undefined ? current.timezone : await this.knownTimezone(input.timezone);
      const { properties: _old, ...rest } = current;
      const workspace: Workspace = {
        ...rest,
        name,
        isDefault: input.isDefault ?? current.isDefault,
        ...(input.properties ? { properties: input.properties } : {}),
        allowedOrigins: input.allowedOrigins ? normalizeOrigins(input.allowedOrigins) : current.allowedOrigins,
        siteDomains: input.siteDomains ? this.freeSiteDomains(input.siteDomains, workspaceId) : current.siteDomains,
        retentionDays: input.retentionDays ?? current.retentionDays,
        timezone,
      };
      const written = this.withDefaultMoved({ workspace, version: this.nextVersion() });
      await this.records.writeWorkspaces(written);
      this.remember(written);
      await this.announce(written[0]!.version);
      if (workspace.retentionDays !== current.retentionDays) await applyRetention(this.migrations, workspace.databaseName, workspace.retentionDays, true);
      return workspace;
    });
  }

  /**
   * Issues a new key of `kind` for the workspace and revokes its stored keys of that kind, in one
   * insert: from the next request in this process, and in the others once they see the change
   * counter move. The new key is returned this once. The environment's keys, which act on the
   * default workspace, are settings and are not touched.
   */
  rotateKey(workspaceId: string, kind: 'public' | 'private'): Promise<RotatedKey> {
    return this.exclusive(async () => {
      await this.reload();
      this.get(workspaceId);
      const version = this.nextVersion();
      const apiKey = generateKey(kind);
      const added: KeyRecord = { keyHash: hashKey(apiKey).toString('hex'), workspaceId, kind };
      const revoked = this.keys.recordsOf(workspaceId).filter((k) => k.kind === kind);
      await this.records.replaceKeys([added], revoked, version);
      for (const k of revoked) this.keys.delete(k.keyHash);
      this.keys.add(Buffer.from(added.keyHash, 'hex'), { workspaceId, kind });
      await this.announce(version);
      this.log.info('workspace key rotated', { workspaceId, kind, revoked: revoked.length });
      return { workspaceId, kind, apiKey, createdAt: toIsoString(BigInt(version)), revokedKeys: revoked.length };
    });
  }

  /** Revokes the workspace's keys at once, then drops its database. The default cannot go. */
  remove(workspaceId: string): Promise<Workspace> {
    return this.exclusive(async () => {
      await this.reload();
      const workspace = this.get(workspaceId);
      if (workspace.isDefault) throw conflict('the default workspace cannot be deleted; make another workspace the default first');
      const version = this.nextVersion();
      const keys = this.keys.recordsOf(workspaceId);
      // The workspace's tombstone alone revokes its keys everywhere (a key needs a live
      // workspace); the keys' own tombstones only tidy the table.
      await this.records.writeWorkspaces([{ workspace, version }], true);
      // Announced first: the other processes refuse its keys within one look at the counter.
      await this.announce(version);
      this.workspaces.delete(workspaceId);
      this.siteDomains = undefined;
      this.noticeDatabases();
      for (const k of keys) this.keys.delete(k.keyHash);
      await this.records
        .writeKeys(keys, version, true)
        .catch((err) => this.log.warn('revoked keys not marked deleted; they stay unusable', { workspaceId, err }));
      for (const listener of this.removalListeners) {
        await listener(workspace).catch((err) => this.log.error('a workspace removal listener failed', { workspaceId, err }));
      }
      await this.migrations
        .dropDatabase(workspace.databaseName)
        .catch((err) => this.log.warn('database not dropped yet; the next refresh retries', { databaseName: workspace.databaseName, err }));
      this.log.info('workspace deleted', { workspaceId, databaseName: workspace.databaseName });
      return workspace;
    });
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.mailbox.ask(work) as Promise<T>;
  }

  /** Replaces the in-memory state with what the metadata database holds. */
  private async reload(): Promise<void> {
    const [versions, keys] = await Promise.all([this.records.workspaces(), this.records.keys()]);
    const ring = new KeyRing();
    for (const key of this.options.publicApiKeys) ring.add(hashKey(key), { workspaceId: null, kind: 'public' });
    for (const key of this.options.privateApiKeys) ring.add(hashKey(key), { workspaceId: null, kind: 'admin' });
    for (const k of keys) ring.add(Buffer.from(k.keyHash, 'hex'), { workspaceId: k.workspaceId, kind: k.kind });
    this.workspaces = new Map();
    this.remember(versions);
    this.keys = ring;
  }

  /** Takes workspace versions into memory and works out which workspace is the default. */
  private remember(versions: readonly WorkspaceVersion[]): void {
    this.siteDomains = undefined;
    for (const v of versions) {
      this.workspaces.set(v.workspace.workspaceId, v);
      this.versions.advancePast(BigInt(v.version));
    }
    // Two processes may move the default at the same moment; the latest change wins.
    let best: WorkspaceVersion | undefined;
    for (const v of this.workspaces.values()) if (v.workspace.isDefault && (!best || v.version > best.version)) best = v;
    this.defaultId = best?.workspace.workspaceId;
    this.noticeDatabases();
  }

  private noticeDatabases(): void {
    const set = [...this.workspaces.values()].map((v) => v.workspace.databaseName).sort().join(',');
    if (set === this.databaseSet) return;
    this.databaseSet = set;
    for (const listener of this.databaseListeners) listener();
  }

  /** `change`, and when it makes its workspace the default, the previous default demoted. */
  private withDefaultMoved(change: WorkspaceVersion): WorkspaceVersion[] {
    const previous = this.defaultId && this.workspaces.get(this.defaultId);
    if (!change.workspace.isDefault || !previous || previous.workspace.workspaceId === change.workspace.workspaceId) return [change];
    return [change, { workspace: { ...previous.workspace, isDefault: false }, version: change.version }];
  }

  /** Row versions in microseconds, strictly increasing in this process. */
  private nextVersion(): number {
    return Number(this.versions.next());
  }

  private checkNameFree(name: string, exceptId?: string): void {
    for (const { workspace } of this.workspaces.values()) {
      if (workspace.name === name && workspace.workspaceId !== exceptId) throw conflict(`a workspace named ${JSON.stringify(name)} already exists`);
    }
  }

  /** `domains` lowercased, each once; 409 naming the first one another workspace lists. */
  private freeSiteDomains(domains: readonly string[], exceptId?: string): string[] {
    const wanted = [...new Set(domains.map((d) => d.toLowerCase()))];
    for (const { workspace } of this.workspaces.values()) {
      if (workspace.workspaceId === exceptId) continue;
      const taken = wanted.find((d) => workspace.siteDomains.includes(d));
      if (taken !== undefined) throw conflict(`site domain ${taken} belongs to workspace ${workspace.workspaceId} (${JSON.stringify(workspace.name)}); remove it there first`);
    }
    return wanted;
  }

  /** The workspace whose siteDomains list `domain` (lowercase), if any. */
  bySiteDomain(domain: string): Workspace | undefined {
    return this.siteDomainIndex().get(domain);
  }

  private siteDomainIndex(): Map<string, Workspace> {
    if (this.siteDomains) return this.siteDomains;
    const index = new Map<string, Workspace>();
    for (const { workspace } of this.workspaces.values()) for (const domain of workspace.siteDomains) index.set(domain, workspace);
    return (this.siteDomains = index);
  }

  /**
   * `timezone` when both the engine (whose functions bucket the periods) and this runtime (whose
   * Intl resolves the ranges) know it by this exact name; else 400 at `/timezone`.
   */
  private async knownTimezone(timezone: string): Promise<string> {
    checkTimezone(timezone, '/timezone');
    if (!(await this.records.engineKnowsTimezone(timezone))) {
      throw invalidInput(`unknown time zone ${JSON.stringify(timezone)}`, [{ pointer: '/timezone', detail: TIMEZONE_RULE }]);
    }
    return timezone;
  }

  private async checkDatabaseFree(databaseName: string): Promise<void> {
    for (const { workspace } of this.workspaces.values()) {
      if (workspace.databaseName === databaseName) throw conflict(`database ${databaseName} belongs to workspace ${workspace.workspaceId}`);
    }
    if (await this.records.databaseExists(databaseName)) {
      throw conflict(`database ${databaseName} already exists in ClickHouse; choose another databaseName`);
    }
  }

  /** The database name derived from `name`, with a random suffix when that one is taken. */
  private async freeDerivedName(name: string): Promise<string> {
    const base = databaseNameFor(name);
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      const candidate = attempt === 0 ? base : withRandomSuffix(base);
      const used = [...this.workspaces.values()].some((v) => v.workspace.databaseName === candidate);
      if (!used && !(await this.records.databaseExists(candidate))) return candidate;
    }
    throw conflict(`no free database name derived from ${JSON.stringify(name)}; give a databaseName`);
  }

  private async dropOrphans(): Promise<void> {
    for (const databaseName of await this.records.orphanedDatabases()) {
      await this.migrations.dropDatabase(databaseName);
      this.log.info('dropped the database of a deleted workspace', { databaseName });
    }
  }

  private async createDefault(): Promise<void> {
    const version = this.nextVersion();
    const workspace: Workspace = {
      workspaceId: crypto.randomUUID(),
      name: 'Default',
      isDefault: true,
      databaseName: this.options.defaultWorkspaceDatabase,
      createdAt: toIsoString(BigInt(version)),
      allowedOrigins: ANY_ORIGIN,
      siteDomains: [],
      retentionDays: this.options.retentionDays,
      timezone: DEFAULT_TIMEZONE,
    };
    await this.records.writeWorkspaces([{ workspace, version }]);
    this.remember([{ workspace, version }]);
    this.log.info('default workspace created', { workspaceId: workspace.workspaceId, databaseName: workspace.databaseName });
  }
}
