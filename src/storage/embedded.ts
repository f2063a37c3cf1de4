import { Session } from 'chdb';
import {
  identifier,
  StorageQueryError,
  StorageUnavailableError,
  type Lane,
  type Params,
  type Row,
  type Storage,
} from './storage';

/** chDB error classes that mean the engine itself is gone, not that the statement was wrong. */
const UNAVAILABLE_CODES = new Set(['CHDB_CONNECTION', 'CHDB_CLOSED', 'CHDB_INTERNAL']);

function mapError(err: unknown): Error {
  const e = err as { code?: string; clickhouseCode?: number; message?: string };
  const message = e?.message ?? String(err);
  if (e?.code && UNAVAILABLE_CODES.has(e.code)) return new StorageUnavailableError(message);
  return new StorageQueryError(message, e?.clickhouseCode);
}

export function parseJSONEachRow(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) if (line) rows.push(JSON.parse(line) as Row);
  return rows;
}

/** A session and the number of statements it has in flight, to pick the least busy reader. */
interface Lease {
  readonly session: Session;
  busy: number;
}

/**
 * The embedded engine: chDB sessions over one data directory. One session is reserved for
 * writes (inserts and DDL); reads spread over `readSessions` others, least busy first.
 */
export class EmbeddedStorage implements Storage {
  readonly mode = 'embedded' as const;
  private readonly writer: Lease;
  private readonly readers: Lease[];
  private closed = false;

  constructor(dataDir: string, readSessions: number) {
    this.writer = { session: new Session(dataDir), busy: 0 };
    this.readers = Array.from({ length: readSessions }, () => ({ session: new Session(dataDir), busy: 0 }));
  }

  private lease(lane: Lane): Lease {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
    if (lane === 'write') return this.writer;
    return this.readers.reduce((best, r) => (r.busy < best.busy ? r : best));
  }

  private async run<T>(lane: Lane, work: (s: Session) => Promise<T>): Promise<T> {
    const lease = this.lease(lane);
    lease.busy++;
    try {
      return await work(lease.session);
    } catch (err) {
      throw mapError(err);
    } finally {
      lease.busy--;
    }
  }

  query(sql: string, params: Params = {}, lane: Lane = 'read'): Promise<Row[]> {
    return this.run(lane, async (s) =>
      parseJSONEachRow((await s.queryBindAsync(sql, params, { format: 'JSONEachRow' })).text()),
    );
  }

  command(sql: string, params: Params = {}): Promise<void> {
    return this.run('write', async (s) => {
      await s.queryBindAsync(sql, params, { format: 'Null' });
    });
  }

  insert(database: string, table: string, rows: readonly Row[]): Promise<void> {
    // chDB validates the target itself and takes it unquoted; identifier() still guards it first.
    identifier(database);
    identifier(table);
    const target = `${database}.${table}`;
    let body = '';
    for (const row of rows) body += JSON.stringify(row) + '\n';
    return this.run('write', async (s) => {
      await s.insert({ table: target, format: 'JSONEachRow', values: Buffer.from(body) });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const lease of [this.writer, ...this.readers]) lease.session.close();
  }
}
