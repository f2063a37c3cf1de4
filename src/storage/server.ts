import { ClickHouseLogLevel, createClient, type ClickHouseClient, type DataFormat } from '@clickhouse/client';
import { splitLines } from './embedded';
import { dropSandboxUserStatement, sandboxPassword, sandboxUserName, sandboxUserStatements, type SandboxUsersMode } from './sandbox-users';
import {
  identifier,
  identifierName,
  INSERT_SETTINGS,
  lineText,
  resultTooLarge,
  DEDUPLICATION_TOKEN,
  sandboxSettings,
  StorageOutcomeUnknownError,
  StorageQueryError,
  StorageUnavailableError,
  streamSettings,
  type InsertLine,
  type Params,
  type Row,
  type Sandbox,
  type SandboxLimits,
  type Storage,
  type StreamFormat,
  type StreamOptions,
} from './storage';

export interface ServerOptions {
  url: string;
  username: string;
  password: string;
  requestTimeoutMs: number;
  /** Settings added to every insert (on a cluster: synchronous distributed inserts, the quorum). */
  insertSettings?: Record<string, string | number>;
  /** Users of each workspace for its SQL (sandbox-users.ts); `cluster` makes them on every node. */
  sandboxUsers?: { mode: SandboxUsersMode; cluster: string; onUnavailable?: (message: string) => void };
}

/** ClickHouse's codes for a user it does not know, or a wrong password: a sandbox user dropped elsewhere. */
const AUTHENTICATION_CODES = new Set([192, 516]);

type Credentials = { username: string; password: string };

/** Transport failures before anything was sent: the statement surely did not run. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function mapError(err: unknown): Error {
  const e = err as { code?: string; type?: string; message?: string };
  const message = e?.message ?? String(err);
  // ClickHouseError carries the server's numeric code as a string: the server ran the statement
  // and it failed. Anything else is a transport failure that may pass once the server is back;
  // unless the connection was refused, the statement may have run (a timeout, a reset, a proxy's
  // error page).
  const code = e?.code !== undefined && /^\d+$/.test(e.code) ? Number(e.code) : undefined;
  if (code !== undefined) return new StorageQueryError(message, code);
  if (e?.code !== undefined && NOT_SENT.has(e.code)) return new StorageUnavailableError(message);
  return new StorageOutcomeUnknownError(message);
}

/** A ClickHouse server or cluster over HTTP through `@clickhouse/client`. */
export class ServerStorage implements Storage {
  readonly mode = 'server' as const;
  private readonly client: ClickHouseClient;
  private readonly insertSettings: Record<string, string | number>;
  /** Each workspace database's sandbox user, once made by this process (undefined: the service's own user). */
  private readonly sandboxCredentials = new Map<string, Promise<Credentials | undefined>>();
  /** Set once the server refused to make a sandbox user in `auto` mode: the service's user runs user SQL. */
  private sandboxUsersRefused = false;

  constructor(private readonly options: ServerOptions) {
    this.insertSettings = { ...INSERT_SETTINGS, ...options.insertSettings };
    this.client = createClient({
      url: options.url,
      username: options.username,
      password: options.password,
      request_timeout: options.requestTimeoutMs,
      // Failures reach our own structured log through the errors we map; the client's own
      // console output would break the one-JSON-object-per-line format.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async query(sql: string, params: Params = {}): Promise<Row[]> {
    try {
      const result = await this.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return await result.json<Row>();
    } catch (err) {
      throw mapError(err);
    }
  }

  async queryLines(sql: string, params: Params = {}): Promise<string[]> {
    try {
      const result = await this.client.query({ query: sql, query_params: params, format: 'TabSeparatedRaw' });
      return splitLines(await result.text());
    } catch (err) {
      throw mapError(err);
    }
  }

  async command(sql: string, params: Params = {}): Promise<void> {
    try {
      await this.client.command({ query: sql, query_params: params });
    } catch (err) {
      throw mapError(err);
    }
  }

  async insert(database: string, table: string, lines: readonly InsertLine[], deduplicationToken?: string): Promise<void> {
    if (deduplicationToken !== undefined && !DEDUPLICATION_TOKEN.test(deduplicationToken)) throw new Error('not a valid deduplication token');
    // In the statement rather than a URL setting: the token has been checked above.
    const settings = deduplicationToken === undefined ? '' : ` SETTINGS insert_deduplication_token = '${deduplicationToken}'`;
    try {
      // The lines are JSONEachRow already: sent as they are after the statement, in one request.
      await this.client.command({
        query: `INSERT INTO ${identifier(database)}.${identifier(table)}${settings} FORMAT JSONEachRow\n${lines.map(lineText).join('\n')}\n`,
        clickhouse_settings: this.insertSettings,
      });
    } catch (err) {
      throw mapError(err);
    }
  }

  async *stream(sql: string, params: Params, format: StreamFormat, options: StreamOptions = {}): AsyncIterable<Uint8Array> {
    let stream: AsyncIterable<Uint8Array>;
    try {
      const auth = options.sandboxed && options.database ? await this.sandboxUser(options.database) : undefined;
      ({ stream } = await this.client.exec({
        query: sql,
        ...(auth ? { auth } : {}),
        query_params: params,
        // The format first: readonly, if given, fixes every setting after it.
        // A format the client's types do not list (Arrow, Native) is still a format to the server.
        clickhouse_settings: { default_format: format as DataFormat, ...streamSettings(format, options.settings) },
        ...(options.database ? { http_headers: { 'X-ClickHouse-Database': identifierName(options.database) } } : {}),
      }));
    } catch (err) {
      throw mapError(err);
    }
    try {
      for await (const chunk of stream) yield chunk;
    } catch (err) {
      throw mapError(err);
    }
  }

  openSandbox(limits: SandboxLimits): Sandbox {
    const inspect = sandboxSettings(limits, 'inspect');
    const run = sandboxSettings(limits, 'run');
    return {
      inspect: (database, sql, params) => this.asSandboxUser(database, (auth) => this.queryIn(database, sql, params ?? {}, inspect, Infinity, auth)),
      run: (database, sql) => this.asSandboxUser(database, (auth) => this.queryIn(database, sql, {}, run, limits.maxResultBytes, auth)),
      close: async () => {},
    };
  }

  async forgetDatabase(database: string): Promise<void> {
    this.sandboxCredentials.delete(database);
    const users = this.options.sandboxUsers;
    if (!users || users.mode === 'off' || this.sandboxUsersRefused) return;
    await this.command(dropSandboxUserStatement(database, users.cluster));
  }

  /**
   * Runs `work` as the sandbox user of `database`, made first if this process has not yet. A user
   * dropped meanwhile by another process (its workspace deleted and made again) is made again once.
   */
  private async asSandboxUser(database: string, work: (auth: Credentials | undefined) => Promise<string>): Promise<string> {
    try {
      return await work(await this.sandboxUser(database));
    } catch (err) {
      if (!(err instanceof StorageQueryError && err.clickhouseCode !== undefined && AUTHENTICATION_CODES.has(err.clickhouseCode))) throw err;
      this.sandboxCredentials.delete(database);
      return await work(await this.sandboxUser(database));
    }
  }

  private sandboxUser(database: string): Promise<Credentials | undefined> {
    const users = this.options.sandboxUsers;
    if (!users || users.mode === 'off' || this.sandboxUsersRefused) return Promise.resolve(undefined);
    let credentials = this.sandboxCredentials.get(database);
    if (!credentials) {
      credentials = this.makeSandboxUser(database, users);
      this.sandboxCredentials.set(database, credentials);
      credentials.catch(() => this.sandboxCredentials.delete(database));
    }
    return credentials;
  }

  private async makeSandboxUser(database: string, users: NonNullable<ServerOptions['sandboxUsers']>): Promise<Credentials | undefined> {
    const password = sandboxPassword(this.options.password, database);
    try {
      for (const statement of sandboxUserStatements(database, password, users.cluster)) await this.command(statement);
      return { username: sandboxUserName(database), password };
    } catch (err) {
      if (!(err instanceof StorageQueryError)) throw err;
      if (users.mode === 'on') {
        throw new StorageUnavailableError(`CLICKHOUSE_SANDBOX_USERS=on, but the server did not make the sandbox user of ${database}: ${err.message}`);
      }
      this.sandboxUsersRefused = true;
      users.onUnavailable?.(err.message);
      return undefined;
    }
  }

  /**
   * One statement with `database` as the current database and query-level settings. Sent with
   * exec, as written: query() would append a FORMAT clause, which in `EXPLAIN AST SELECT ...`
   * attaches to the explained SELECT instead. The output format is a setting instead. The answer
   * is read as it arrives and dropped once it passes `maxBytes`, which stops the statement.
   */
  private async queryIn(database: string, sql: string, params: Params, settings: Record<string, string>, maxBytes: number, auth: Credentials | undefined): Promise<string> {
    try {
      const { stream } = await this.client.exec({
        query: sql,
        ...(auth ? { auth } : {}),
        query_params: params,
        // Before readonly, which fixes every setting after it.
        clickhouse_settings: { default_format: 'JSONEachRow', ...settings },
        // The client has no per-query database; the HTTP interface takes it as a header.
        http_headers: { 'X-ClickHouse-Database': identifierName(database) },
      });
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of stream) {
        bytes += (chunk as Buffer).length;
        if (bytes > maxBytes) {
          stream.destroy();
          throw resultTooLarge(maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      throw err instanceof StorageQueryError ? err : mapError(err);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
