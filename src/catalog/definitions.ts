import type { VersionedTable } from '../dashboards/records';
import type { Row } from '../storage/storage';
import { engineToIso, parseIsoDateTime, toEngineDateTime } from '../timestamps';

/** What a catalog entry is: an event, or a property of one of the event's objects. */
export type DefinitionKind = 'event' | 'properties' | 'traits' | 'context';

/** The curated fields of an event or a property, as stored per workspace in the metadata database. */
export interface DefinitionRecord {
  workspaceId: string;
  kind: DefinitionKind;
  name: string;
  /** Events only. */
  displayName?: string;
  description: string;
  tags: string[];
  owner: string;
  verified: boolean;
  hidden: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A definition's id: its kind and name, so one event or property has one row per workspace. */
export const definitionId = (kind: DefinitionKind, name: string) => `${kind}:${name}`;

const engineTime = (iso: string) => toEngineDateTime(parseIsoDateTime(iso)!);
const truthy = (value: unknown) => value === true || value === 1 || value === '1' || value === 'true';

/** The `catalog_definitions` table (meta migration 16). */
export const CATALOG_DEFINITIONS: VersionedTable<DefinitionRecord> = {
  name: 'catalog_definitions',
  idColumn: 'definitionId',
  columns: ['definitionId', 'workspaceId', 'kind', 'name', 'displayName', 'description', 'tags', 'owner', 'verified', 'hidden', 'createdAt', 'updatedAt'],
  toRecord: (row: Row) => ({
    workspaceId: String(row.workspaceId),
    kind: String(row.kind) as DefinitionKind,
    name: String(row.name),
    ...(row.displayName === null || row.displayName === undefined ? {} : { displayName: String(row.displayName) }),
    description: String(row.description),
    tags: (row.tags as unknown[]).map(String),
    owner: String(row.owner),
    verified: truthy(row.verified),
    hidden: truthy(row.hidden),
    createdAt: engineToIso(String(row.createdAt)),
    updatedAt: engineToIso(String(row.updatedAt)),
  }),
  toRow: (record) => ({
    definitionId: definitionId(record.kind, record.name),
    workspaceId: record.workspaceId,
    kind: record.kind,
    name: record.name,
    displayName: record.displayName ?? null,
    description: record.description,
    tags: record.tags,
    owner: record.owner,
    verified: record.verified,
    hidden: record.hidden,
    createdAt: engineTime(record.createdAt),
    updatedAt: engineTime(record.updatedAt),
  }),
};
