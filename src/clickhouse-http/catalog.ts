import { INTERNAL_TABLES } from '../queries/sql-guard';
import type { Params, Storage } from '../storage/storage';

/**
 * The system tables a BI tool reads on connecting, each restricted to what the workspace owns. The
 * service reads the workspace's rows itself (bound parameters, its own session) and hands them to
 * the statement as a CTE of literals cast to the source's column types: the statement still reads
 * no table outside the workspace, and the guard judges it as any other (the cast's type string too;
 * `values()` is refused, as its structure string may hold expressions). Paths of the server's files
 * are left empty.
 */
const SOURCES: Record<string, string> = {
  'system.databases': "SELECT * REPLACE ('' AS data_path, '' AS metadata_path) FROM system.databases WHERE name = {database:String}",
  'system.tables':
    "SELECT * REPLACE (emptyArrayString() AS data_paths, '' AS metadata_path) FROM system.tables WHERE database = {database:String} AND name NOT IN {internal:Array(String)}",
  'system.columns': 'SELECT * FROM system.columns WHERE database = {database:String} AND table NOT IN {internal:Array(String)}',
  // The settings a statement of this interface runs with, not the service's own.
  'system.settings':
    'SELECT * REPLACE (arrayElement({values:Array(String)}, indexOf({names:Array(String)}, name)) AS value, toUInt8(1) AS changed) FROM system.settings WHERE has({names:Array(String)}, name)',
  'information_schema.schemata': 'SELECT * FROM information_schema.schemata WHERE schema_name = {database:String}',
  'information_schema.tables': 'SELECT * FROM information_schema.tables WHERE table_schema = {database:String} AND table_name NOT IN {internal:Array(String)}',
  'information_schema.columns': 'SELECT * FROM information_schema.columns WHERE table_schema = {database:String} AND table_name NOT IN {internal:Array(String)}',
  'INFORMATION_SCHEMA.SCHEMATA': 'SELECT * FROM INFORMATION_SCHEMA.SCHEMATA WHERE schema_name = {database:String}',
  'INFORMATION_SCHEMA.TABLES': 'SELECT * FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = {database:String} AND table_name NOT IN {internal:Array(String)}',
  'INFORMATION_SCHEMA.COLUMNS': 'SELECT * FROM INFORMATION_SCHEMA.COLUMNS WHERE table_schema = {database:String} AND table_name NOT IN {internal:Array(String)}',
};

export const isCatalogTable = (qualified: string): boolean => Object.hasOwn(SOURCES, qualified);

/** A string literal of `text`: a backslash before each backslash and quote. */
const literal = (text: string): string => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/** A source's columns: the names a statement reads, and the array-of-tuples type its rows are cast to. */
interface Structure {
  names: string[];
  rowsType: string;
}

/** What the catalog's rows are read for: the workspace's database, and the settings its statements run with. */
export interface CatalogScope {
  database: string;
  settings: Record<string, string>;
}

export class Catalog {
  /** Each source's columns, read once: the engine's system tables do not change while it runs. */
  private readonly structures = new Map<string, Promise<Structure>>();

  constructor(private readonly storage: Storage) {}

  /**
   * The body of a CTE standing for `qualified` (`system.tables`): the workspace's rows as tuple
   * literals the engine wrote (the Values format), cast to an array of the source's column types and
   * unfolded into its own column names.
   */
  async rows(qualified: string, scope: CatalogScope): Promise<string> {
    const source = SOURCES[qualified]!;
    const params: Params = {
      database: scope.database,
      internal: [...INTERNAL_TABLES],
      names: Object.keys(scope.settings),
      values: Object.values(scope.settings),
    };
    const [structure, rows] = await Promise.all([this.structure(source, params), this.storage.queryLines(`SELECT formatRowNoNewline('Values', *) FROM (${source})`, params)]);
    const columns = structure.names.map((name, index) => `row.${index + 1} AS \`${name}\``).join(', ');
    return `SELECT ${columns} FROM (SELECT arrayJoin(CAST([${rows.join(', ')}], ${structure.rowsType})) AS row)`;
  }

  /** The names of the workspace's tables, as a statement may name them. */
  async tableNames(database: string): Promise<Set<string>> {
    const sql = 'SELECT name FROM system.tables WHERE database = {database:String} AND name NOT IN {internal:Array(String)}';
    return new Set(await this.storage.queryLines(sql, { database, internal: [...INTERNAL_TABLES] }));
  }

  private structure(source: string, params: Params): Promise<Structure> {
    let structure = this.structures.get(source);
    if (!structure) {
      structure = this.storage.query(`DESCRIBE (${source})`, params).then((columns) => ({
        names: columns.map((column) => String(column.name)),
        rowsType: literal(`Array(Tuple(${columns.map((column) => String(column.type)).join(', ')}))`),
      }));
      structure.catch(() => this.structures.delete(source));
      this.structures.set(source, structure);
    }
    return structure;
  }
}
