/**
 * The one storage interface. Both backends run the same ClickHouse SQL; user values travel as
 * bound `{name:Type}` parameters, identifiers only after `identifier()` has checked them.
 */

/** Rows as the engine returns them in JSONEachRow (64-bit integers arrive as strings). */
export type Row = Record<string, unknown>;
export type Params = Record<string, string | number | boolean | null | readonly string[]>;

/**
 * Which engine session a statement runs on. Inserts get their own session so that a long read
 * never queues an insert behind it (one chDB session runs one query at a time).
 */
export type Lane = 'write' | 'read';

export interface Storage {
  readonly mode: 'embedded' | 'server';
  /** Runs a statement that returns rows. */
  query(sql: string, params?: Params, lane?: Lane): Promise<Row[]>;
  /** Runs a statement that returns nothing (DDL, INSERT ... VALUES of metadata). */
  command(sql: string, params?: Params): Promise<void>;
  /** Inserts rows into `database.table` as one INSERT: one part, all or nothing. */
  insert(database: string, table: string, rows: readonly Row[]): Promise<void>;
  close(): Promise<void>;
}

/** The engine or server could not do the work; the request may succeed later (503). */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
}

/** The engine refused a statement (syntax, unknown column, limits); carries ClickHouse's code. */
export class StorageQueryError extends Error {
  override readonly name = 'StorageQueryError';
  constructor(message: string, readonly clickhouseCode: number | undefined) {
    super(message);
  }
}

/** A database or table name that is safe to use without quoting tricks (and needs no quoting). */
export const IDENTIFIER_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';
const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN);

/** Returns `name` back-quoted, or throws when it is not a strict identifier. */
export function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a valid identifier: ${JSON.stringify(name)}`);
  return '`' + name + '`';
}
