import type { Params, Row, Sandbox, Storage } from '../../src/storage/storage';

/** One statement as the service issued it. */
export interface Issued {
  kind: 'query' | 'command' | 'insert';
  sql: string;
  params?: Params;
}

/**
 * A Storage that records every statement and answers as an empty server would (no rows), so a
 * service can start on it without a ClickHouse cluster: only to collect the SQL the service
 * issues for a configuration. It executes nothing; the tests parse what it collected with chDB.
 */
export class RecordingStorage implements Storage {
  readonly mode = 'server' as const;
  readonly issued: Issued[] = [];

  async query(sql: string, params?: Params): Promise<Row[]> {
    this.issued.push({ kind: 'query', sql, ...(params ? { params } : {}) });
    // The lease reads the server's clock when it finds no rows.
    return /AS nowMs$/.test(sql.trim()) ? [{ nowMs: String(Date.now()) }] : [];
  }

  async queryLines(sql: string, params?: Params): Promise<string[]> {
    this.issued.push({ kind: 'query', sql, ...(params ? { params } : {}) });
    return [];
  }

  async command(sql: string, params?: Params): Promise<void> {
    this.issued.push({ kind: 'command', sql, ...(params ? { params } : {}) });
  }

  async insert(database: string, table: string, lines: readonly string[]): Promise<void> {
    this.issued.push({ kind: 'insert', sql: `INSERT INTO \`${database}\`.\`${table}\` FORMAT JSONEachRow`, params: { rows: lines.length } });
  }

  // eslint-disable-next-line require-yield
  async *stream(sql: string): AsyncIterable<Uint8Array> {
    this.issued.push({ kind: 'query', sql });
  }

  openSandbox(): Sandbox {
    return {
      inspect: async (_database, sql) => (this.issued.push({ kind: 'query', sql }), ''),
      run: async (_database, sql) => (this.issued.push({ kind: 'query', sql }), ''),
      close: async () => {},
    };
  }

  async forgetDatabase(): Promise<void> {}

  async close(): Promise<void> {}
}
