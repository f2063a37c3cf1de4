import type { VersionedRecords } from '../dashboards/records';
import { pageOf } from '../http/pagination';
import { MonotonicClock } from '../monotonic-clock';
import { identifier, type Params, type Row, type Storage } from '../storage/storage';
import { engineToIso, toIsoString } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import { definitionId, type DefinitionKind, type DefinitionRecord } from './definitions';
import { MAX_EXAMPLES, type PropertyKind } from './observations';
import type { CatalogEvent, CatalogProperty, CuratedPatch } from './model';
import { UnknownCatalogEntry } from './problems';

interface ListQuery {
  limit?: string;
  offset?: string;
  search?: string;
  hidden?: 'true' | 'false';
  dateFrom?: string;
  dateTo?: string;
}

const UNCURATED = { description: '', tags: [] as string[], owner: '', verified: false, hidden: false };
const typeCounts = (pairs: unknown) =>
  (pairs as Array<[string, unknown]>).map(([type, count]) => ({ type, count: Number(count) })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));

/**
 * The event catalog of a workspace: what its `catalog` table observed (src/catalog/observations.ts),
 * with the curated fields of `catalog_definitions` beside it. Reads group the table's rows (one per
 * day, type and library) into one item per event or property.
 */
export class Catalog {
  private readonly versions = new MonotonicClock();

  constructor(
    private readonly storage: Storage,
    private readonly definitions: VersionedRecords<DefinitionRecord>,
    /** Waits until the events acknowledged so far are loaded (and so in the catalog). */
    private readonly ingested: (database: string) => Promise<void>,
  ) {}

  async events(workspace: Workspace, query: ListQuery) {
    await this.ingested(workspace.databaseName);
    const params: Params = {};
    const rows = await this.storage.query(
      `SELECT event AS name, groupArray((type, n)) AS types, sum(n) AS volume, toString(min(f)) AS firstSeen, toString(max(l)) AS lastSeen, arraySort(groupUniqArrayArray(libs)) AS libraries
        FROM (SELECT event, type, sum(events) AS n, min(firstSeen) AS f, max(lastSeen) AS l, groupUniqArray(library) AS libs
          FROM ${identifier(workspace.databaseName)}.catalog WHERE kind = 'event' AND ${this.filters(query, params)} GROUP BY event, type)
        GROUP BY event ORDER BY volume DESC, name`,
      params,
      'read',
    );
    const curated = await this.curated(workspace);
    const items: CatalogEvent[] = rows.map((row) => {
      const definition = curated.get(definitionId('event', String(row.name)));
      return { ...observed(row), examples: [], displayName: definition?.displayName ?? null, ...curatedFields(definition) };
    });
    return pageOf(this.visible(items, query), query);
  }

  async properties(workspace: Workspace, query: ListQuery & { event?: string; source?: PropertyKind }) {
    await this.ingested(workspace.databaseName);
    const params: Params = {};
    let where = `kind != 'event' AND ${this.filters(query, params)}`;
    if (query.event !== undefined) {
      where += ' AND event = {event:String}';
      params.event = query.event;
    }
    if (query.source !== undefined) {
      where += ' AND kind = {source:String}';
      params.source = query.source;
    }
    const rows = await this.storage.query(
      `SELECT kind AS source, path AS name, groupArray((type, n)) AS types, sum(n) AS volume, toString(min(f)) AS firstSeen, toString(max(l)) AS lastSeen,
          arraySlice(arrayDistinct(arrayFlatten(groupArray(ex))), 1, ${MAX_EXAMPLES}) AS examples, arraySort(groupUniqArrayArray(evs)) AS events, arraySort(groupUniqArrayArray(libs)) AS libraries
        FROM (SELECT kind, path, type, sum(events) AS n, min(firstSeen) AS f, max(lastSeen) AS l, groupUniqArrayArray(${MAX_EXAMPLES})(examples) AS ex, groupUniqArray(event) AS evs, groupUniqArray(library) AS libs
          FROM ${identifier(workspace.databaseName)}.catalog WHERE ${where} GROUP BY kind, path, type)
        GROUP BY kind, path ORDER BY volume DESC, source, name`,
      params,
      'read',
    );
    const curated = await this.curated(workspace);
    const items: CatalogProperty[] = rows.map((row) => ({
      ...observed(row),
      source: String(row.source),
      examples: (row.examples as unknown[]).map(String),
      events: (row.events as unknown[]).map(String),
      ...curatedFields(curated.get(definitionId(String(row.source) as PropertyKind, String(row.name)))),
    }));
    return pageOf(this.visible(items, query), query);
  }

  /** Sets curated fields of an event the workspace has received; the others stay. */
  async patchEvent(workspace: Workspace, name: string, patch: CuratedPatch): Promise<CatalogEvent> {
    await this.patch(workspace, 'event', name, patch);
    const [item] = (await this.events(workspace, {})).results.filter((e) => e.name === name);
    return item!;
  }

  /** Sets curated fields of a property (of `source`) the workspace has received; the others stay. */
  async patchProperty(workspace: Workspace, source: PropertyKind, name: string, patch: CuratedPatch): Promise<CatalogProperty> {
    await this.patch(workspace, source, name, patch);
    const [item] = (await this.properties(workspace, { source })).results.filter((p) => p.name === name);
    return item!;
  }

  removeWorkspace(workspaceId: string): Promise<void> {
    return this.definitions.removeWorkspace(workspaceId, this.versions.next());
  }

  private async patch(workspace: Workspace, kind: DefinitionKind, name: string, patch: CuratedPatch): Promise<void> {
    await this.ingested(workspace.databaseName);
    const [seen] = await this.storage.query(
      `SELECT 1 FROM ${identifier(workspace.databaseName)}.catalog WHERE kind = {kind:String} AND ${kind === 'event' ? 'event' : 'path'} = {name:String} LIMIT 1`,
      { kind, name },
      'read',
    );
    const what = kind === 'event' ? 'event' : `property of ${kind}`;
    if (!seen) throw new UnknownCatalogEntry(`no ${what} named ${JSON.stringify(name)} has been received by this workspace; curate what it has received`);
    const [current] = await this.definitions.find(workspace.workspaceId, [definitionId(kind, name)]);
    const now = toIsoString(this.versions.next());
    const { displayName, ...fields } = patch;
    const base: DefinitionRecord = current ?? { workspaceId: workspace.workspaceId, kind, name, ...UNCURATED, createdAt: now, updatedAt: now };
    const record: DefinitionRecord = { ...base, ...fields, updatedAt: now };
    if (displayName === null) delete record.displayName;
    else if (displayName !== undefined) record.displayName = displayName;
    await this.definitions.write(record, this.versions.next());
  }

  /** The workspace's curated fields, by definition id. */
  private async curated(workspace: Workspace): Promise<Map<string, DefinitionRecord>> {
    return new Map((await this.definitions.list(workspace.workspaceId)).map((d) => [definitionId(d.kind, d.name), d]));
  }

  /** The conditions on days and names of a list query, its values bound in `params`. */
  private filters(query: ListQuery, params: Params): string {
    const conditions = ['1'];
    if (query.dateFrom !== undefined) {
      conditions.push('day >= {dateFrom:Date}');
      params.dateFrom = query.dateFrom;
    }
    if (query.dateTo !== undefined) {
      conditions.push('day <= {dateTo:Date}');
      params.dateTo = query.dateTo;
    }
    if (query.search !== undefined && query.search !== '') {
      conditions.push(`positionCaseInsensitiveUTF8(if(kind = 'event', event, path), {search:String}) > 0`);
      params.search = query.search;
    }
    return conditions.join(' AND ');
  }

  private visible<T extends { hidden: boolean }>(items: T[], query: ListQuery): T[] {
    return query.hidden === undefined ? items : items.filter((item) => item.hidden === (query.hidden === 'true'));
  }
}

function observed(row: Row) {
  return {
    name: String(row.name),
    types: typeCounts(row.types),
    volume: Number(row.volume),
    firstSeen: engineToIso(String(row.firstSeen)),
    lastSeen: engineToIso(String(row.lastSeen)),
    libraries: (row.libraries as unknown[]).map(String),
  };
}

function curatedFields(definition: DefinitionRecord | undefined) {
  const { description, tags, owner, verified, hidden } = definition ?? UNCURATED;
  return { description, tags, owner, verified, hidden };
}
