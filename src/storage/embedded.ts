import { createReadStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'chdb';
import {
  identifier,
  resultTooLarge,
  identifierName,
  INSERT_SETTINGS,
  sandboxSettings,
  StorageQueryError,
  StorageUnavailableError,
  streamSettings,
  type InsertLine,
  type Lane,
  type Params,
  type Row,
  type Sandbox,
  type SandboxLimits,
  type Storage,
  type StreamFormat,
  type StreamOptions,
} from './storage';

const NEWLINE = 0x0a;

/** chDB error classes that mean the engine itself is gone, not that the statement was wrong. */
const UNAVAILABLE_CODES = new Set(['CHDB_CONNECTION', 'CHDB_CLOSED', 'CHDB_INTERNAL']);

const codeInMessage = (message: string): number | undefined => {
  const code = /^Code: (\d+)\./.exec(message)?.[1];
  return code === undefined ? undefined : Number(code);
};

function mapError(err: unknown): Error {
  const e = err as { code?: string; clickhouseCode?: number; message?: string };
  const message = e?.message ?? String(err);
  if (e?.code && UNAVAILABLE_CODES.has(e.code)) return new StorageUnavailableError(message);
  // A streamed result's error carries the code only in its message.
  return new StorageQueryError(message, e?.clickhouseCode ?? codeInMessage(message));
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

/**
 * A chDB session whose settings were fixed when it was opened, used one statement at a time. A
 * statement that did not finish cleanly (failed, or cut at the byte limit) may leave rows behind
 * in the session, which chDB hands to whatever runs next there: measured, the next statement
 * answered 65,409 rows of a failed one before its own. So after any such statement the session
 * is closed and a new one opened in its place (about 5 ms).
 */
class SandboxSession {
  private currentDatabase = '';
  private session: Session;

  constructor(
    private readonly open: () => Session,
    /** Bytes of result text at most, counted as the engine hands them over; beyond, the statement is stopped. */
    private readonly maxResultBytes = Infinity,
  ) {
    this.session = open();
  }

  async run(database: string, sql: string, params: Params = {}): Promise<string> {
    try {
      // chDB has no per-query database; USE is safe here because the caller runs one statement
      // at a time on this session.
      if (database !== this.currentDatabase) {
        await this.session.queryAsync(`USE ${identifier(database)}`);
        this.currentDatabase = database;
      }
      if (this.maxResultBytes === Infinity) return await execute(this.session, sql, params, 'JSONEachRow');
      return await this.bounded(sql);
    } catch (err) {
      this.renew();
      throw err instanceof StorageQueryError ? err : mapError(err);
    }
  }

  /**
   * The result read chunk by chunk and stopped once its text passes the byte limit, which the
   * engine's own `max_result_bytes` did not enforce (a 250 MB result came back whole).
   */
  private async bounded(sql: string): Promise<string> {
    const chunks: string[] = [];
    let bytes = 0;
    for await (const chunk of this.session.queryStream(sql, { format: 'JSONEachRow' })) {
      bytes += chunk.numBytes;
      if (bytes > this.maxResultBytes) throw resultTooLarge(this.maxResultBytes);
      chunks.push(chunk.text());
    }
    return chunks.join('');
  }

  private renew(): void {
    this.session.close();
    this.session = this.open();
    this.currentDatabase = '';
  }

  close(): void {
    this.session.close();
  }
}

/** Where the header line of CSVWithNames text ends (after its newline), quoted newlines aside; 0 when none. */
function headerLength(bytes: Uint8Array): number {
  let quoted = false;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x22) quoted = !quoted;
    else if (bytes[i] === 0x0a && !quoted) return i + 1;
  }
  return 0;
}

/**
 * Formats whose streamed chunks join into one answer: chDB formats each chunk as an answer of its
 * own, which for these is rows alone (CSVWithNames repeats its header line, which is dropped).
 * Any other format (JSON's document, a header of names and types, Parquet's footer) is written
 * whole to a file by the engine instead (`formattedFile`).
 */
const CHUNKABLE_FORMATS = new Set([
  'JSONEachRow',
  'JSONLines',
  'NDJSON',
  'JSONStringsEachRow',
  'JSONCompactEachRow',
  'JSONCompactStringsEachRow',
  'TabSeparated',
  'TSV',
  'TabSeparatedRaw',
  'TSVRaw',
  'CSV',
  'CSVWithNames',
  'RowBinary',
  'Native',
  'Null',
]);

/** chDB repeats CSVWithNames's header line at the start of every streamed chunk: only the first is kept. */
async function* withoutRepeatedHeaders(format: StreamFormat, chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  if (format !== 'CSVWithNames') return yield* chunks;
  let header: Buffer | undefined;
  for await (const chunk of chunks) {
    if (!header) {
      header = Buffer.from(chunk.subarray(0, headerLength(chunk)));
      yield chunk;
    } else yield header.length > 0 && header.equals(chunk.subarray(0, header.length)) ? chunk.subarray(header.length) : chunk;
  }
}

/** How long closing waits for the statements already given, and the engine's mutations, to finish. */
const CLOSE_WAIT_MS = 30_000;

/**
 * A session, the statements given to it and not yet finished (to pick the least busy), and the
 * end of its line: each runs once the one before it is done.
 */
interface Lease {
  readonly session: Session;
  busy: number;
  tail: Promise<unknown>;
  /** Where its inserts' bodies are written, reused from one insert to the next (see `insertBody`). */
  body?: Buffer;
}

/**
 * The largest insert body kept for reuse: an events load is at most 8 MiB of rows
 * (src/events/ingest-buffer.ts), written once per writer session; a larger body is made for its insert alone.
 */
const REUSED_BODY_MAX_BYTES = 16 * 1024 * 1024;

/**
 * `lines` as one JSONEachRow body, each followed by a newline, in the lease's reused buffer when it
 * fits. Under batched ingest a new body per insert (8 MiB, several a second) was garbage the
 * runtime collected late: with the rest of each request's, it kept a few hundred MiB of the
 * process's memory in dead buffers. Only valid until the lease's next insert: chDB reads it in
 * place (no copy) until the insert ends.
 */
function insertBody(lines: readonly InsertLine[], lease: Lease): Buffer {
  let bytes = lines.length;
  for (const line of lines) bytes += Buffer.byteLength(line);
  const reused = bytes <= REUSED_BODY_MAX_BYTES;
  if (reused && (lease.body?.length ?? 0) < bytes) lease.body = Buffer.allocUnsafe(Math.min(REUSED_BODY_MAX_BYTES, Math.max(bytes, 2 * (lease.body?.length ?? 0))));
  const body = reused ? lease.body! : Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const line of lines) {
    if (typeof line === 'string') at += body.write(line, at);
    else {
      body.set(line, at);
      at += line.byteLength;
    }
    body[at++] = NEWLINE;
  }
  return body.subarray(0, at);
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
  /** Opened on first use: most processes never run maintenance. */
  private background: Lease | undefined;
  private closed = false;

  /** Answers being written whole (Parquet, JSON); what a stopped process left there is removed at the next start. */
  private readonly exportDir: string;

  constructor(
    private readonly dataDir: string,
    readSessions: number,
    writeSessions = 1,
    /**
     * Where the engine may write backups (`BACKUP ... TO File(...)` refuses any other path).
     * The engine takes its configuration from the first session of the process, so every
     * session says the same.
     */
    private readonly backupDir = join(dataDir, 'backups'),
  ) {
    this.exportDir = join(dataDir, 'export-files');
    rmSync(this.exportDir, { recursive: true, force: true });
    const open = (n: number) => Array.from({ length: n }, () => ({ session: this.openSession(), busy: 0, tail: Promise.resolve() }));
    this.writers = open(writeSessions);
    this.readers = open(readSessions);
  }

  /** A session over the data directory, with the engine's configuration and then `settings`. */
  private openSession(settings: Record<string, string> = {}): Session {
    const connectionArgs = [`--backups.allowed_path=${this.backupDir}`, ...Object.entries(settings).map(([k, v]) => `--${k}=${v}`)];
    return new Session(this.dataDir, { connectionArgs });
  }

  private lease(lane: Lane): Lease {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
    if (lane === 'background') return (this.background ??= { session: this.openSession(), busy: 0, tail: Promise.resolve() });
    const pool = lane === 'write' ? this.writers : this.readers;
    return pool.reduce((best, r) => (r.busy < best.busy ? r : best));
  }

  /**
   * Runs `work` on the least busy session of the lane, after the statements already given to
   * that session. A session runs one statement at a time anyway, but a statement handed to chdb
   * while its session is busy waits inside a thread of the runtime's small shared pool, where it
   * holds up every other session's statements (ingestion included): so the waiting is done here.
   */
  private async run<T>(lane: Lane, work: (s: Session, lease: Lease) => Promise<T>): Promise<T> {
    const lease = this.lease(lane);
    lease.busy++;
    const turn = lease.tail.then(() => work(lease.session, lease));
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

  command(sql: string, params: Params = {}, lane: Lane = 'write'): Promise<void> {
    return this.run(lane, async (s) => {
      await execute(s, sql, params, 'Null');
    });
  }

  insert(database: string, table: string, lines: readonly InsertLine[], deduplicationToken?: string): Promise<void> {
    // chDB validates the target itself and takes it unquoted; identifierName() still guards it first.
    const target = `${identifierName(database)}.${identifierName(table)}`;
    return this.run('write', async (s, lease) => {
      const settings = deduplicationToken === undefined ? INSERT_SETTINGS : { ...INSERT_SETTINGS, insert_deduplication_token: deduplicationToken };
      // Bytes are copied as they are: encoding the events' text again cost 6% of the main thread under batched ingest.
      await s.insert({ table: target, format: 'JSONEachRow', values: insertBody(lines, lease), settings });
    });
  }

  async *stream(sql: string, params: Params, format: StreamFormat, options: StreamOptions = {}): AsyncIterable<Uint8Array> {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
    // A session per stream: one session streams one result at a time, and its settings (a
    // sandbox's readonly) stay with it.
    const session = this.openStreamSession(streamSettings(format, options.settings));
    try {
      if (options.database) await session.queryAsync(`USE ${identifier(options.database)}`);
      if (CHUNKABLE_FORMATS.has(format)) yield* withoutRepeatedHeaders(format, this.chunks(session, sql, params, format));
      else yield* this.formattedFile(session, sql, params, format);
    } catch (err) {
      throw mapError(err);
    } finally {
      session.close();
    }
  }

  /**
   * A session with a stream's settings. chDB does not open one with a value of a setting that the
   * engine does not take, and says only that the connection failed: the settings are then tried
   * one at a time to name the one at fault, which is the statement's error (BAD_ARGUMENTS, as
   * ClickHouse answers such a value), not the engine's.
   */
  private openStreamSession(settings: Record<string, string>): Session {
    try {
      return this.openSession(settings);
    } catch (err) {
      for (const [name, value] of Object.entries(settings)) {
        try {
          this.openSession({ [name]: value }).close();
        } catch {
          throw new StorageQueryError(`Code: 36. DB::Exception: The engine does not take ${JSON.stringify(value)} as the value of setting '${name}'. (BAD_ARGUMENTS)`, 36);
        }
      }
      throw mapError(err);
    }
  }

  private async *chunks(session: Session, sql: string, params: Params, format: StreamFormat): AsyncIterable<Uint8Array> {
    const result = Object.keys(params).length > 0 ? session.queryStreamBind(sql, params, { format }) : session.queryStream(sql, { format });
    // A copy: the chunk's memory belongs to the engine once the next one is read.
    for await (const chunk of result) yield Uint8Array.from(chunk.raw());
  }

  /**
   * chDB formats each streamed chunk as a file of its own, which for Parquet (a footer indexes
   * the whole file) or JSON (one document) makes no one answer. So the engine writes the file to
   * disk (INTO OUTFILE, which readonly allows: it is the client's side of the engine), streaming
   * it, and the file is read out in pieces and removed. Its name ends in `.out`, from which the
   * engine infers no compression.
   */
  private async *formattedFile(session: Session, sql: string, params: Params, format: StreamFormat): AsyncIterable<Uint8Array> {
    mkdirSync(this.exportDir, { recursive: true });
    // Our own name, with nothing of the caller's in it, so it may stand in the statement.
    const path = join(this.exportDir, `${crypto.randomUUID()}.out`);
    try {
      await execute(session, `${sql} INTO OUTFILE '${path}' FORMAT ${identifierName(format)}`, params, 'TabSeparated');
      for await (const chunk of createReadStream(path)) yield chunk as Uint8Array;
    } finally {
      rmSync(path, { force: true });
    }
  }

  openSandbox(limits: SandboxLimits): Sandbox {
    const inspect = new SandboxSession(() => this.openSession(sandboxSettings(limits, 'inspect')));
    const run = new SandboxSession(() => this.openSession(sandboxSettings(limits, 'run')), limits.maxResultBytes);
    return {
      inspect: (database, sql, params) => inspect.run(database, sql, params),
      run: (database, sql) => run.run(database, sql),
      close: async () => {
        inspect.close();
        run.close();
      },
    };
  }

  /** The embedded engine has no users: nothing is kept for a database beside it. */
  async forgetDatabase(): Promise<void> {}

  /**
   * Refuses new statements, lets those already given finish (at most CLOSE_WAIT_MS), then closes
   * the sessions: a session closed under a running statement frees what the statement's thread
   * still uses (seen as a process ending with SIGSEGV as it stopped, right after a busy moment).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const deadline = Date.now() + CLOSE_WAIT_MS;
    const leases = [...this.writers, ...this.readers, ...(this.background ? [this.background] : [])];
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(leases.map((lease) => lease.tail)), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
    await this.mutationsDone(leases[0]!.session, deadline);
    for (const lease of leases) lease.session.close();
  }

  /**
   * Waits (until `deadline`) for the engine's mutations under way to finish: one still running
   * as the process exits (a property column being filled, say) crashed it with SIGSEGV. A
   * mutation cut short by the deadline is taken up again at the next start.
   */
  private async mutationsDone(session: Session, deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      const running = Number(await execute(session, 'SELECT count() FROM system.mutations WHERE NOT is_done', {}, 'TabSeparated').catch(() => '0'));
      if (running === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
