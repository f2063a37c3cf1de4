/**
 * The one storage interface. Both backends run the same ClickHouse SQL; user values travel as
 * bound `{name:Type}` parameters, identifiers only after `identifier()` has checked them.
 */

/** Rows as the engine returns them in JSONEachRow (64-bit integers arrive as strings). */
export type Row = Record<string, unknown>;

/** Rows as JSONEachRow lines, the form `insert` takes. */
export const jsonLines = (rows: readonly Row[]): string[] => rows.map((row) => JSON.stringify(row));

/**
 * How inserted lines are read, the same on both backends: a nested object goes into a String
 * column as its JSON text, exactly as sent (so an event's JSON is its row), and ISO 8601 times
 * are read as well as ClickHouse's own form.
 */
export const INSERT_SETTINGS = { input_format_json_read_objects_as_strings: 1, date_time_input_format: 'best_effort' } as const;
export type Params = Record<string, string | number | boolean | null | readonly string[]>;

/**
 * An output format of `stream`, by ClickHouse's own name (`JSONEachRow`, `CSVWithNames`,
 * `Parquet`, ...). Callers pass names from lists of their own: never a name as a client sent it.
 */
export type StreamFormat = string;

/**
 * Settings a stream of `format` runs with, ahead of the caller's. A Parquet writer holds a whole
 * row group in memory before writing it (ClickHouse's default: a million rows): smaller groups
 * keep an export's memory flat.
 */
export function streamSettings(format: StreamFormat, settings: Record<string, string> = {}): Record<string, string> {
  return format === 'Parquet' ? { output_format_parquet_row_group_size: '100000', ...settings } : settings;
}

/**
 * Which engine sessions a statement runs on. Writes (inserts, DDL, metadata) have sessions of
 * their own so that a long read never queues an insert behind it (one chDB session runs one
 * query at a time). Long maintenance (erasure, backups) has one of its own too, so that it never
 * holds up either.
 */
export type Lane = 'write' | 'read' | 'background';

/** The limits every statement of user SQL runs under. */
export interface SandboxLimits {
  timeoutMs: number;
  maxResultRows: number;
  maxResultBytes: number;
  maxMemoryBytes: number;
}

/**
 * Connections for untrusted SQL: read-only, within the limits, one statement at a time. Not a
 * security boundary by itself (readonly still reads every database, and some functions read
 * files); the query guard decides what may run. `inspect` is for the guard's own reads of a
 * statement (its parse, its EXPLAIN), `run` for the statement itself.
 */
export interface Sandbox {
  /** Readonly, time and memory limits, no result limits. Rows as JSONEachRow text. */
  inspect(database: string, sql: string, params?: Params): Promise<string>;
  /** Every limit, result size included, with `database` as the current database. */
  run(database: string, sql: string): Promise<string>;
  close(): Promise<void>;
}

/** Rows per block of a sandbox's results. */
const SANDBOX_BLOCK_ROWS = 8192;

/**
 * The ClickHouse settings of a sandbox, for `inspect` (no result limits), `run`, or `export` (no
 * result limits, blocks as `run`'s). `readonly = 1` comes last: once it applies, no other setting
 * can change, neither by us nor by the statement (a SETTINGS clause then fails with code 164).
 */
export function sandboxSettings(limits: SandboxLimits, lane: 'inspect' | 'run' | 'export'): Record<string, string> {
  return {
    max_execution_time: String(limits.timeoutMs / 1000),
    max_memory_usage: String(limits.maxMemoryBytes),
    // Large aggregations and sorts go to disk past half of it instead of failing.
    max_bytes_before_external_group_by: String(Math.floor(limits.maxMemoryBytes / 2)),
    max_bytes_before_external_sort: String(Math.floor(limits.maxMemoryBytes / 2)),
    ...(lane === 'run'
      ? {
          max_result_rows: String(limits.maxResultRows),
          max_result_bytes: String(limits.maxResultBytes),
          result_overflow_mode: 'throw',
        }
      : {}),
    ...(lane === 'inspect'
      ? {}
      : {
          // Results come in blocks of at most this many rows, so the service's own count of
          // result bytes stops a large one early (300 MB in 30,000 rows: 82 MB read and 1.9 s
          // instead of a single block of 300 MB and 24 s), and an export's chunks, each held
          // until written, stay small. Table reads already come in blocks of about a megabyte
          // (preferred_block_size_bytes), so analytics are not slowed.
          max_block_size: String(SANDBOX_BLOCK_ROWS),
        }),
    // Numbers stay numbers in JSON, so 64-bit values can be passed on with all their digits.
    output_format_json_quote_64bit_integers: '0',
    readonly: '1',
  };
}

/** Where and how a stream runs: its current database, its settings, and whether it is a workspace's own SQL. */
export interface StreamOptions {
  database?: string;
  settings?: Record<string, string>;
  /** User SQL of `database`: on a server it runs as that workspace's sandbox user, as a sandbox's statements do. */
  sandboxed?: boolean;
}

/** A JSONEachRow line: text, or its UTF-8 bytes (the ingest log's, inserted without being encoded again). */
export type InsertLine = string | Uint8Array;

/** The text of an insert line. */
export const lineText = (line: InsertLine): string => (typeof line === 'string' ? line : Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8'));

export interface Storage {
  readonly mode: 'embedded' | 'server';
  /** Runs a statement that returns rows. */
  query(sql: string, params?: Params, lane?: Lane): Promise<Row[]>;
  /** Runs a statement that returns one text column, and answers its values as they are. */
  queryLines(sql: string, params?: Params, lane?: Lane): Promise<string[]>;
  /** Runs a statement that returns nothing (DDL, INSERT ... VALUES of metadata); on the write lane unless told. */
  command(sql: string, params?: Params, lane?: Lane): Promise<void>;
  /**
   * Inserts JSONEachRow lines into `database.table` as one INSERT: one part, all or nothing.
   * Repeating an insert with the same `deduplicationToken` stores it once, in a table that keeps
   * a deduplication window (the events tables do).
   */
  insert(database: string, table: string, lines: readonly InsertLine[], deduplicationToken?: string): Promise<void>;
  /**
   * Streams a statement's result in `format`, chunk by chunk as the engine makes them, on a
   * connection of its own: memory stays flat however large the result, and a long export holds
   * up no other statement. `settings` are ClickHouse settings for the statement (applied in
   * order, so `readonly` goes last); `database` is its current database. Stopping the iteration
   * cancels the statement.
   */
  stream(sql: string, params: Params, format: StreamFormat, options?: StreamOptions): AsyncIterable<Uint8Array>;
  /** A connection of its own for user SQL, apart from the sessions ingestion and listing use. */
  openSandbox(limits: SandboxLimits): Sandbox;
  /** Removes what the storage keeps for a dropped database besides the database (a server's sandbox user). */
  forgetDatabase(database: string): Promise<void>;
  close(): Promise<void>;
}

/** The engine or server could not do the work; the request may succeed later (503). */
export class StorageUnavailableError extends Error {
  override readonly name: string = 'StorageUnavailableError';
}

/**
 * The statement was sent but no answer came (timed out, connection lost): it may have taken
 * effect or not. Repeating an insert with the same deduplication token settles which.
 */
export class StorageOutcomeUnknownError extends StorageUnavailableError {
  override readonly name = 'StorageOutcomeUnknownError';
}

/** What a deduplication token may look like: it is written into the statement. */
export const DEDUPLICATION_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * ClickHouse's codes for data it cannot read into its columns (parse errors, wrong types, values
 * out of range, escape sequences): the rows are at fault, and sending them again fails again.
 */
const BAD_DATA_CODES = new Set([6, 25, 26, 27, 32, 38, 41, 53, 69, 70, 72, 117, 131, 306, 321, 349]);

/** ClickHouse's codes for an unknown table (60) and an unknown database (81). */
const MISSING_TABLE_CODES = new Set([60, 81]);

/** The engine refused a statement (syntax, unknown column, limits); carries ClickHouse's code. */
export class StorageQueryError extends Error {
  override readonly name = 'StorageQueryError';
  constructor(message: string, readonly clickhouseCode: number | undefined) {
    super(message);
  }

  /** The database or table does not exist (a deleted workspace's). */
  get isMissingTable(): boolean {
    return this.clickhouseCode !== undefined && MISSING_TABLE_CODES.has(this.clickhouseCode);
  }

  /** The engine refused the data itself, not the moment (a full disk, too many parts, memory). */
  get isBadData(): boolean {
    return this.clickhouseCode !== undefined && BAD_DATA_CODES.has(this.clickhouseCode);
  }
}

/** ClickHouse's TOO_MANY_ROWS_OR_BYTES: a result over its limits. */
const TOO_MANY_ROWS_OR_BYTES = 396;

/** A result stopped by the service at its byte limit, told as the engine tells its own limits. */
export function resultTooLarge(maxResultBytes: number): StorageQueryError {
  return new StorageQueryError(
    `the result is larger than ${maxResultBytes} bytes (QUERY_MAX_RESULT_BYTES), and was stopped there: select fewer rows or columns, or use POST /queries/export. (TOO_MANY_ROWS_OR_BYTES)`,
    TOO_MANY_ROWS_OR_BYTES,
  );
}

/** A database or table name that is safe to use without quoting tricks (and needs no quoting). */
export const IDENTIFIER_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';
const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN);

/** Returns `name` itself, or throws when it is not a strict identifier. */
export function identifierName(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a valid identifier: ${JSON.stringify(name)}`);
  return name;
}

/** Returns `name` back-quoted, or throws when it is not a strict identifier. */
export function identifier(name: string): string {
  return '`' + identifierName(name) + '`';
}
