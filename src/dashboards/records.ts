import { parseJsonLossless } from '../lossless-json';
import { identifier, jsonLines, type Row, type Storage } from '../storage/storage';
import { engineToIso, parseIsoDateTime, toEngineDateTime, type Micros } from '../timestamps';
import type { SavedKind, Tile } from './model';

/** A saved insight as stored. */
export interface SavedInsightRecord {
  id: string;
  workspaceId: string;
  name: string;
  kind: SavedKind;
  /** The kind's request body, or the SQL text. */
  query: unknown;
  display?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** A dashboard as stored. */
export interface DashboardRecord {
  id: string;
  workspaceId: string;
  name: string;
  tiles: Tile[];
  refreshSeconds?: number;
  dateFrom?: string;
  dateTo?: string;
  createdAt: string;
  updatedAt: string;
}

const engineTime = (iso: string) => toEngineDateTime(parseIsoDateTime(iso)!);
/** Stored JSON read back with every number as it was written (a 64-bit value in a filter). */
const json = (text: unknown) => parseJsonLossless(String(text));
const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/** A versioned table of the metadata database: its name, columns, and how a record is a row. */
export interface VersionedTable<R> {
  name: string;
  idColumn: string;
  /** Every column but `version` and `isDeleted`. */
  columns: readonly string[];
  toRecord(row: Row): R;
  toRow(record: R): Row;
}

/**
 * Records of a workspace in a versioned table of the metadata database, stored as cohorts are: a
 * change is a newer `version` of the row, a deletion one with `isDeleted = 1`, and reads take the
 * newest with FINAL.
 */
export class VersionedRecords<R> {
  private readonly qualified: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
    private readonly table: VersionedTable<R>,
  ) {
    this.qualified = `${identifier(metaDatabase)}.${table.name}`;
  }

  async list(workspaceId: string): Promise<R[]> {
    const rows = await this.storage.query(`SELECT * FROM ${this.qualified} FINAL WHERE workspaceId = {workspaceId:String} AND isDeleted = 0 ORDER BY createdAt, ${this.table.idColumn}`, { workspaceId }, 'write');
    return rows.map(this.table.toRecord);
  }

  async find(workspaceId: string, ids: readonly string[]): Promise<R[]> {
    const rows = await this.storage.query(
      `SELECT * FROM ${this.qualified} FINAL WHERE workspaceId = {workspaceId:String} AND ${this.table.idColumn} IN {ids:Array(String)} AND isDeleted = 0`,
      { workspaceId, ids },
      'write',
    );
    return rows.map(this.table.toRecord);
  }

  async count(workspaceId: string): Promise<number> {
    const [row] = await this.storage.query(`SELECT count() AS n FROM ${this.qualified} FINAL WHERE workspaceId = {workspaceId:String} AND isDeleted = 0`, { workspaceId }, 'write');
    return Number(row?.n ?? 0);
  }

  write(record: R, version: Micros, deleted = false): Promise<void> {
    return this.storage.insert(this.metaDatabase, this.table.name, jsonLines([{ ...this.table.toRow(record), version: version.toString(), isDeleted: deleted ? 1 : 0 }]));
  }

  /** Marks every record of a deleted workspace deleted. */
  removeWorkspace(workspaceId: string, version: Micros): Promise<void> {
    const columns = this.table.columns.join(', ');
    return this.storage.command(
      `INSERT INTO ${this.qualified} (${columns}, version, isDeleted) SELECT ${columns}, {version:UInt64}, 1 FROM ${this.qualified} FINAL WHERE workspaceId = {workspaceId:String} AND isDeleted = 0`,
      { workspaceId, version: version.toString() },
    );
  }
}

/** The `saved_insights` table. */
export const SAVED_INSIGHTS: VersionedTable<SavedInsightRecord> = {
  name: 'saved_insights',
  idColumn: 'insightId',
  columns: ['insightId', 'workspaceId', 'name', 'kind', 'query', 'display', 'createdAt', 'updatedAt'],
  toRecord: (row) => ({
    id: String(row.insightId),
    workspaceId: String(row.workspaceId),
    name: String(row.name),
    kind: String(row.kind) as SavedKind,
    query: json(row.query),
    ...(present(row.display) ? { display: json(row.display) as Record<string, unknown> } : {}),
    createdAt: engineToIso(String(row.createdAt)),
    updatedAt: engineToIso(String(row.updatedAt)),
  }),
  toRow: (record) => ({
    insightId: record.id,
    workspaceId: record.workspaceId,
    name: record.name,
    kind: record.kind,
    query: JSON.stringify(record.query),
    display: record.display === undefined ? null : JSON.stringify(record.display),
    createdAt: engineTime(record.createdAt),
    updatedAt: engineTime(record.updatedAt),
  }),
};

/** The `dashboards` table. */
export const DASHBOARDS: VersionedTable<DashboardRecord> = {
  name: 'dashboards',
  idColumn: 'dashboardId',
  columns: ['dashboardId', 'workspaceId', 'name', 'tiles', 'refreshSeconds', 'dateFrom', 'dateTo', 'createdAt', 'updatedAt'],
  toRecord: (row) => ({
    id: String(row.dashboardId),
    workspaceId: String(row.workspaceId),
    name: String(row.name),
    tiles: JSON.parse(String(row.tiles)) as Tile[],
    ...(present(row.refreshSeconds) ? { refreshSeconds: Number(row.refreshSeconds) } : {}),
    ...(present(row.dateFrom) ? { dateFrom: String(row.dateFrom) } : {}),
    ...(present(row.dateTo) ? { dateTo: String(row.dateTo) } : {}),
    createdAt: engineToIso(String(row.createdAt)),
    updatedAt: engineToIso(String(row.updatedAt)),
  }),
  toRow: (record) => ({
    dashboardId: record.id,
    workspaceId: record.workspaceId,
    name: record.name,
    tiles: JSON.stringify(record.tiles),
    refreshSeconds: record.refreshSeconds ?? null,
    dateFrom: record.dateFrom ?? null,
    dateTo: record.dateTo ?? null,
    createdAt: engineTime(record.createdAt),
    updatedAt: engineTime(record.updatedAt),
  }),
};
