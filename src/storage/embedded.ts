import { Session } from 'chdb';
import {
  identifier,
  identifierName,
  INSERT_SETTINGS,
  sandboxSettings,
  StorageQueryError,
  StorageUnavailableError,
  type Lane,
  type Params,
  type Row,
  type Sandbox,
  type SandboxLimits,
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

/**
 * Runs a statement on a session. chdb runs every parameterized query of the process one after
 * another (libchdb's parameter state is not isolated per connection), so a statement without
 * parameters goes the unchained way: a long read must not hold up other sessions' statements.
 */
async function execute(session: Session, sql: string, params: Params, format: string): Promise<string> {
  const result = Object.keys(params).length > 0 ? await session.queryBindAsync(sql, params, { format }) : await session.queryAsync(sql, { format });
  return result.text();
}

export function splitLines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

export function parseJSONEachRow(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) if (line) rows.push(JSON.parse(line) as Row);
  return rows;
}

/** A chDB session whose settings were fixed when it was opened, used one statement at a time. */
class SandboxSession {
  private currentDatabase = '';
  private readonly session: Session;

  constructor(dataDir: string, settings: Record<string, string>) {
    this.session = new Session(dataDir, { connectionArgs: Object.entries(settings).map(([k, v]) => `--${k}=${v}`) });
  }

  async run(database: string, sql: string, params: Params = {}): Promise<string> {
    try {
      // chDB has no per-query database; USE is safe here because the caller runs one statement
      // at a time on this session.
      if (database !== this.currentDatabase) {
        await this.session.queryAsync(`USE ${identifier(database)}`);
        this.currentDatabase = database;
      }
      return await execute(this.session, sql, params, 'JSONEachRow');
    } catch (err) {
      throw mapError(err);
    }
  }

  close(): void {
    this.session.close();
  }
}

/**
 * A session, the statements given to it and not yet finished (to pick the least busy), and the
 * end of its line: each runs once the one before it is done.
 */
interface Lease {
  readonly session: Session;
  busy: number;
  tail: Promise<unknown>;
}

/**
 * The embedded engine: chDB sessions over one data directory. Writes (inserts and DDL) spread
 * over `writeSessions` sessions, reads over `readSessions` others, least busy first, so that a
 * long read never queues an insert.
 */
export class EmbeddedStorage implements Storage {
  readonly mode = 'embedded' as const;
  private readonly writers: Lease[];
  private readonly readers: Lease[];
  private closed = false;

  constructor(
    private readonly dataDir: string,
    readSessions: number,
    writeSessions = 1,
  ) {
    const open = (n: number) => Array.from({ length: n }, () => ({ session: new Session(dataDir), busy: 0, tail: Promise.resolve() }));
    this.writers = open(writeSessions);
    this.readers = open(readSessions);
  }

  private lease(lane: Lane): Lease {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
    const pool = lane === 'write' ? this.writers : this.readers;
    return pool.reduce((best, r) => (r.busy < best.busy ? r : best));
  }

  /**
   * Runs `work` on the least busy session of the lane, after the statements already given to
   * that session. A session runs one statement at a time anyway, but a statement handed to chdb
   * while its session is busy waits inside a thread of the runtime's small shared pool, where it
   * holds up every other session's statements (ingestion included): so the waiting is done here.
   */
  private async run<T>(lane: Lane, work: (s: Session) => Promise<T>): Promise<T> {
    const lease = this.lease(lane);
    lease.busy++;
    const turn = lease.tail.then(() => work(lease.session));
    lease.tail = turn.catch(() => {});
    try {
      return await turn;
    } catch (err) {
      throw mapError(err);
    } finally {
      lease.busy--;
    }
  }

  query(sql: string, params: Params = {}, lane: Lane = 'read'): Promise<Row[]> {
    return this.run(lane, async (s) => parseJSONEachRow(await execute(s, sql, params, 'JSONEachRow')));
  }

  queryLines(sql: string, params: Params = {}, lane: Lane = 'read'): Promise<string[]> {
    return this.run(lane, async (s) => splitLines(await execute(s, sql, params, 'TabSeparatedRaw')));
  }

  command(sql: string, params: Params = {}): Promise<void> {
    return this.run('write', async (s) => {
      await execute(s, sql, params, 'Null');
    });
  }

  insert(database: string, table: string, lines: readonly string[], deduplicationToken?: string): Promise<void> {
    // chDB validates the target itself and takes it unquoted; identifierName() still guards it first.
    const target = `${identifierName(database)}.${identifierName(table)}`;
    const body = Buffer.from(lines.join('\n') + '\n');
    return this.run('write', async (s) => {
      const settings = deduplicationToken === undefined ? INSERT_SETTINGS : { ...INSERT_SETTINGS, insert_deduplication_token: deduplicationToken };
      await s.insert({ table: target, format: 'JSONEachRow', values: body, settings });
    });
  }

  openSandbox(limits: SandboxLimits): Sandbox {
    const inspect = new SandboxSession(this.dataDir, sandboxSettings(limits, 'inspect'));
    const run = new SandboxSession(this.dataDir, sandboxSettings(limits, 'run'));
    return {
      inspect: (database, sql, params) => inspect.run(database, sql, params),
      run: (database, sql) => run.run(database, sql),
      close: async () => {
        inspect.close();
        run.close();
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const lease of [...this.writers, ...this.readers]) lease.session.close();
  }
}
