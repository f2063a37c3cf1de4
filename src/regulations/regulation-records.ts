import { identifier, jsonLines, type Row, type Storage } from '../storage/storage';
import { engineToIso, parseIsoDateTime, toEngineDateTime } from '../timestamps';
import type { Regulation, RegulationType, SubjectType } from './model';

/** A regulation as stored: its answer, and the workspace it belongs to. */
export interface RegulationRecord {
  workspaceId: string;
  regulation: Regulation;
}

/** A suppressed subject of a workspace. */
export interface Suppression {
  workspaceId: string;
  subjectType: SubjectType;
  subjectId: string;
}

const engineTime = (iso: string) => toEngineDateTime(parseIsoDateTime(iso)!);

function toRecord(row: Row): RegulationRecord {
  const subjectIds = row.subjectIds as string[];
  return {
    workspaceId: String(row.workspaceId),
    regulation: {
      id: String(row.id),
      regulationType: String(row.regulationType) as RegulationType,
      subjectType: String(row.subjectType) as SubjectType,
      subjectIds,
      subjectCount: subjectIds.length,
      status: String(row.status),
      eventsDeleted: Number(row.eventsDeleted),
      ...(row.error ? { error: String(row.error) } : {}),
      requestedBy: { keyKind: String(row.requestedByKind), keyId: String(row.requestedByKeyId) },
      createdAt: engineToIso(String(row.createdAt)),
      ...(row.finishedAt ? { finishedAt: engineToIso(String(row.finishedAt)) } : {}),
    },
  };
}

/**
 * The SQL of the metadata tables `regulations` and `suppressions`, both ReplacingMergeTree read
 * with FINAL: a change of status is a newer version of the regulation's row, un-suppressing a
 * newer version of the subject's row with isDeleted = 1. Small statements: the write lane.
 */
export class RegulationRecords {
  private readonly meta: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
  ) {
    this.meta = identifier(metaDatabase);
  }

  write({ workspaceId, regulation: r }: RegulationRecord, version: number): Promise<void> {
    const row = {
      id: r.id,
      workspaceId,
      regulationType: r.regulationType,
      subjectType: r.subjectType,
      subjectIds: r.subjectIds,
      status: r.status,
      eventsDeleted: r.eventsDeleted,
      error: r.error ?? '',
      requestedByKind: r.requestedBy.keyKind,
      requestedByKeyId: r.requestedBy.keyId,
      createdAt: engineTime(r.createdAt),
      finishedAt: r.finishedAt ? engineTime(r.finishedAt) : null,
      version,
    };
    return this.storage.insert(this.metaDatabase, 'regulations', jsonLines([row]));
  }

  async find(workspaceId: string, id: string): Promise<RegulationRecord | undefined> {
    const rows = await this.storage.query(
      `SELECT * FROM ${this.meta}.regulations FINAL WHERE workspaceId = {workspaceId:String} AND id = {id:String}`,
      { workspaceId, id },
      'write',
    );
    return rows[0] && toRecord(rows[0]);
  }

  /** A page of the workspace's regulations, newest first, and how many it has. */
  async page(workspaceId: string, limit: number, offset: number): Promise<{ records: RegulationRecord[]; total: number }> {
    const params = { workspaceId, limit, offset };
    const [rows, count] = await Promise.all([
      this.storage.query(
        `SELECT * FROM ${this.meta}.regulations FINAL WHERE workspaceId = {workspaceId:String}
         ORDER BY createdAt DESC, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        params,
        'write',
      ),
      this.storage.query(`SELECT count() AS total FROM ${this.meta}.regulations FINAL WHERE workspaceId = {workspaceId:String}`, params, 'write'),
    ]);
    return { records: rows.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  /** Regulations a stopped process left pending or running, oldest first, to be resumed. */
  async unfinished(): Promise<RegulationRecord[]> {
    const rows = await this.storage.query(
      `SELECT * FROM ${this.meta}.regulations FINAL WHERE status IN ('pending', 'running') ORDER BY createdAt, id`,
      {},
      'write',
    );
    return rows.map(toRecord);
  }

  /** Suppresses (or, with `deleted`, un-suppresses) subjects, in one insert. */
  writeSuppressions(subjects: readonly Suppression[], regulationId: string, version: number, deleted: boolean): Promise<void> {
    return this.storage.insert(
      this.metaDatabase,
      'suppressions',
      jsonLines(subjects.map((s) => ({ ...s, regulationId, version, isDeleted: deleted ? 1 : 0 }))),
    );
  }

  async suppressions(): Promise<Suppression[]> {
    const rows = await this.storage.query(`SELECT workspaceId, subjectType, subjectId FROM ${this.meta}.suppressions FINAL`, {}, 'write');
    return rows.map((r) => ({ workspaceId: String(r.workspaceId), subjectType: r.subjectType as SubjectType, subjectId: String(r.subjectId) }));
  }
}
