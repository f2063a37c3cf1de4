import { identifier, jsonLines, type Row, type Storage } from '../storage/storage';
import { engineToIso, parseIsoDateTime, toEngineDateTime, type Micros } from '../timestamps';
import type { CohortFilter } from './model';

/** A cohort as stored: its definition, not its members. */
export interface CohortRecord {
  id: string;
  workspaceId: string;
  name: string;
  filters: CohortFilter[];
  /** Whether automated clients count (src/events/bots.ts). */
  includeBots: boolean;
  createdAt: string;
  updatedAt: string;
}

function toRecord(row: Row): CohortRecord {
  return {
    id: String(row.cohortId),
    workspaceId: String(row.workspaceId),
    name: String(row.name),
    filters: JSON.parse(String(row.filters)) as CohortFilter[],
    includeBots: row.includeBots === true || Number(row.includeBots) === 1,
    createdAt: engineToIso(String(row.createdAt)),
    updatedAt: engineToIso(String(row.updatedAt)),
  };
}

/** The `cohorts` table of the metadata database: versioned rows, read with FINAL. */
export class CohortRecords {
  private readonly table: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
  ) {
    this.table = `${identifier(metaDatabase)}.cohorts`;
  }

  async list(workspaceId: string): Promise<CohortRecord[]> {
    const rows = await this.storage.query(`SELECT * FROM ${this.table} FINAL WHERE workspaceId = {workspaceId:String} AND isDeleted = 0 ORDER BY createdAt, cohortId`, { workspaceId }, 'write');
    return rows.map(toRecord);
  }

  async find(workspaceId: string, ids: readonly string[]): Promise<CohortRecord[]> {
    const rows = await this.storage.query(
      `SELECT * FROM ${this.table} FINAL WHERE workspaceId = {workspaceId:String} AND cohortId IN {ids:Array(String)} AND isDeleted = 0`,
      { workspaceId, ids },
      'write',
    );
    return rows.map(toRecord);
  }

  async write(record: CohortRecord, version: Micros, deleted = false): Promise<void> {
    const row = {
      cohortId: record.id,
      workspaceId: record.workspaceId,
      name: record.name,
      filters: JSON.stringify(record.filters),
      includeBots: record.includeBots,
      createdAt: toEngineDateTime(parseIsoDateTime(record.createdAt)!),
      updatedAt: toEngineDateTime(parseIsoDateTime(record.updatedAt)!),
      version: version.toString(),
      isDeleted: deleted ? 1 : 0,
    };
    await this.storage.insert(this.metaDatabase, 'cohorts', jsonLines([row]));
  }

  /** Marks every cohort of a deleted workspace deleted. */
  async removeWorkspace(workspaceId: string, version: Micros): Promise<void> {
    await this.storage.command(
      `INSERT INTO ${this.table} (cohortId, workspaceId, name, filters, includeBots, createdAt, updatedAt, version, isDeleted)
       SELECT cohortId, workspaceId, name, filters, includeBots, createdAt, updatedAt, {version:UInt64}, 1 FROM ${this.table} FINAL WHERE workspaceId = {workspaceId:String} AND isDeleted = 0`,
      { workspaceId, version: version.toString() },
    );
  }
}
