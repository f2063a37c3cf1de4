import { forbidden, invalidInput, RETRY_AFTER_SECONDS, tooManyRequests, unavailable } from '../http/problem';
import { TokenBuckets } from '../http/token-buckets';
import type { Logger } from '../log';
import { resultTooLarge, sandboxSettings, StorageQueryError, type Params, type Row, type Sandbox, type SandboxLimits, type Storage, type StreamFormat } from '../storage/storage';
import type { FastReads } from '../properties/fast-reads';
import { parseResultRows, resultRowsJson } from './result-rows';
import { FairScheduler } from './fair-scheduler';
import type { ResultBudget, ResultHold } from './result-budget';
import { guardStatement, SqlRefusal, SqlUnsupported } from './sql-guard';
import { VerdictCache } from './verdict-cache';

/** How a statement ended: it returned its rows, or it was refused or failed. */
export type StatementOutcome = 'ok' | 'error';

export interface QueryRunnerOptions {
  /** Statements running at once, each on a sandbox of its own. */
  concurrency: number;
  /** Statements waiting for a sandbox, at most; beyond it requests get 503. */
  queueMax: number;
  /** Statements of one workspace running at once, at most; its others wait behind them. */
  workspaceConcurrency: number;
  /** Statements of one workspace waiting, at most; beyond it its requests get 429. */
  workspaceQueueMax: number;
  /** Seconds of statement time one workspace may use per minute (0: no quota); beyond it 429. */
  workspaceSecondsPerMinute: number;
  limits: SandboxLimits;
  /** Told of each statement that ran: its outcome and how long checking and running it took (for metrics). */
  onStatement?: (outcome: StatementOutcome, seconds: number) => void;
  /** Reads property values from the columns that store them where it can (src/properties/). */
  fastReads?: FastReads;
  /** The result bytes held for answers not yet written, of every request (result-budget.ts). */
  results: ResultBudget;
}

/** What a statement of a request answers when it was not run, another having failed first. */
const NOT_RUN = Symbol('not run');

/** Workspaces whose quota use is remembered, at most. */
const QUOTA_WORKSPACES = 10_000;

/** Verdicts remembered, at most, and for how long at most. */
const VERDICTS = 1000;
const VERDICT_MAX_AGE_MS = 60_000;

/** ClickHouse's READONLY: the statement tried to write or to change a setting. */
const READONLY_CODE = 164;

/** ClickHouse's UNKNOWN_TABLE and UNKNOWN_DATABASE. */
const UNKNOWN_NAME_CODES = new Set([60, 81]);

/**
 * ClickHouse's message, tidied: without the server version, the repeated `Code: N.` prefix and
 * type of a rethrown exception, and the guard's own formatQuery() call that parsed the text. An
 * unknown table's "Maybe you meant ...?" is dropped: the engine looks for a similar name in every
 * database, so its suggestion may name another workspace's table (measured: `ws.secret_tb`
 * suggested `other.secret_tbl`).
 */
export function engineMessage(err: StorageQueryError): string {
  const message = err.message
    .replace(/ \(version [^)]*\)/g, '')
    .replace(/^(Code: \d+\. DB::Exception: )+/, '$1')
    .replace(/:? In scope SELECT formatQuery\([\s\S]*\) AS statement(?:, normalizeQueryKeepNames\(statement\) AS shape)?\./, '.')
    .replace(/(\([A-Z_]+\))\.? \1$/, '$1')
    .trim();
  return err.clickhouseCode !== undefined && UNKNOWN_NAME_CODES.has(err.clickhouseCode) ? message.replace(/ Maybe you meant [^?]*\?/g, '') : message;
}

/** The setting behind each limit the engine enforces, named in its message so an operator knows what to raise. */
const LIMIT_SETTINGS = new Map([
  [159, 'QUERY_TIMEOUT_MS'],
  [241, 'QUERY_MAX_MEMORY_BYTES'],
  [396, 'QUERY_MAX_RESULT_ROWS'],
]);

function withLimitSetting(message: string, code: number | undefined): string {
  const setting = code === undefined ? undefined : LIMIT_SETTINGS.get(code);
  return setting === undefined || message.includes('QUERY_') ? message : `${message} (the limit is ${setting})`;
}

/** The answer for statement `index` that could not run. */
function statementProblem(index: number, err: unknown): unknown {
  const pointer = `/queries/${index}`;
  if (err instanceof SqlRefusal) return forbidden(`statement ${index} was refused: ${err.message}`, [{ pointer, detail: err.message }]);
  if (err instanceof SqlUnsupported) return invalidInput(`statement ${index} cannot run: ${err.message}`, [{ pointer, detail: err.message }]);
  if (err instanceof StorageQueryError) {
    const message = withLimitSetting(engineMessage(err), err.clickhouseCode);
    if (err.clickhouseCode === READONLY_CODE) return forbidden(`statement ${index} was refused: ${message}`, [{ pointer, detail: message }]);
    return invalidInput(`statement ${index} failed: ${message}`, [{ pointer, detail: message }]);
  }
  return err;
}

/**
 * The query runner: user SQL on sandboxes of its own, apart from the sessions that ingestion and
 * listing use, so a heavy statement never stalls them. At most `concurrency` statements run at
 * once, and at most `workspaceConcurrency` of one workspace: a workspace's slow statements wait
 * behind each other, never in front of another workspace's (fair-scheduler.ts). Up to
 * `queueMax` wait in all and `workspaceQueueMax` per workspace; more are refused at once (503,
 * or 429 for the workspace's own excess) rather than queued without bound.
 */
export class QueryRunner {
  private readonly scheduler: FairScheduler;
  private readonly idle: Sandbox[];
  /** Statement time per workspace, in milliseconds, when there is a quota. */
  private readonly quota: TokenBuckets | undefined;
  private readonly verdicts = new VerdictCache(VERDICTS, VERDICT_MAX_AGE_MS);

  constructor(
    private readonly storage: Storage,
    private readonly options: QueryRunnerOptions,
    private readonly log: Logger,
  ) {
    this.scheduler = new FairScheduler(options.concurrency, options.workspaceConcurrency);
    this.quota = options.workspaceSecondsPerMinute > 0 ? new TokenBuckets({ count: options.workspaceSecondsPerMinute * 1000, perMs: 60_000 }, QUOTA_WORKSPACES) : undefined;
    this.idle = Array.from({ length: options.concurrency }, () => storage.openSandbox(options.limits));
  }

  /**
   * Runs each statement in `database` and answers their rows in order. When any fails, the
   * error of the first failing one (by index) is thrown, naming that index.
   */
  run(database: string, statements: readonly string[]): Promise<Row[][]> {
    return this.runEach(database, statements, parseResultRows);
  }

  /**
   * As `run`, each statement's rows answered as the JSON text of their array (POST /queries's
   * answer), and its result charged to `hold` as it is read: what a request holds is its answer's
   * text, charged until written. On failure `hold` has nothing charged.
   */
  async runAnswers(database: string, statements: readonly string[], hold: ResultHold): Promise<string[]> {
    try {
      return await this.runEach(database, statements, (text) => {
        hold.charge(Buffer.byteLength(text));
        return resultRowsJson(text);
      });
    } catch (err) {
      hold.release();
      throw err;
    }
  }

  /** A hold of one request's results, on the budget of every request's (result-budget.ts). */
  resultHold(): ResultHold {
    return this.options.results.hold();
  }

  private async runEach<T>(database: string, statements: readonly string[], shape: (text: string) => T): Promise<T[]> {
    this.admit(database, statements.length);
    // Once one has failed the answer is that failure: statements not yet begun are not run.
    let failed = false;
    const outcomes = await Promise.allSettled(
      statements.map((sql) =>
        this.scheduler.schedule(database, () => {
          if (failed) return Promise.reject(NOT_RUN);
          return this.withSandbox((s) => this.runOne(s, database, sql, shape)).catch((err) => {
            failed = true;
            throw err;
          });
        }),
      ),
    );
    const answers: T[] = [];
    const failure = outcomes.findIndex((outcome) => outcome.status === 'rejected' && outcome.reason !== NOT_RUN);
    if (failure >= 0) throw statementProblem(failure, (outcomes[failure] as PromiseRejectedResult).reason);
    for (const outcome of outcomes) answers.push((outcome as PromiseFulfilledResult<T>).value);
    return answers;
  }

  /**
   * Runs a statement the service compiled (persons, cohorts, insights: checked identifiers and
   * bound values, never user SQL, so the guard is not asked) through the same scheduler, quota,
   * read-only sandbox and time and memory limits as user SQL. An engine error is a 400 naming it.
   */
  async runCompiled(database: string, sql: string, params: Params): Promise<Row[]> {
    this.admit(database, 1);
    return this.scheduler.schedule(database, () =>
      this.withSandbox(async (sandbox) => {
        try {
          const statement = (await this.options.fastReads?.prepare(sandbox, database, sql, params)) ?? sql;
          return await this.measured(database, async () => parseResultRows(await this.charged(database, () => sandbox.inspect(database, statement, params))), (rows) => ({ rows: rows.length }));
        } catch (err) {
          if (!(err instanceof StorageQueryError)) throw err;
          throw invalidInput(`the query failed: ${withLimitSetting(engineMessage(err), err.clickhouseCode)}`, [{ detail: engineMessage(err) }]);
        }
      }),
    );
  }

  /** The limits every statement runs under. */
  get limits(): SandboxLimits {
    return this.options.limits;
  }

  /** Refuses statements that would wait beyond the bounds, or exceed the workspace's quota. */
  private admit(database: string, statements: number): void {
    const { scheduler, options } = this;
    const ownWait = scheduler.waitingOf(database) + scheduler.runningOf(database) + statements - options.workspaceConcurrency;
    if (ownWait > options.workspaceQueueMax) {
      throw tooManyRequests(
        `this workspace has ${scheduler.waitingOf(database)} statements waiting behind its ${scheduler.runningOf(database)} running; at most ${options.workspaceQueueMax} may wait`,
        RETRY_AFTER_SECONDS,
      );
    }
    const quotaWait = this.quota?.wait(database, performance.now()) ?? 0;
    if (quotaWait > 0) {
      throw tooManyRequests(
        `this workspace used its ${options.workspaceSecondsPerMinute} s of statement time for this minute`,
        Math.ceil(quotaWait / 1000),
      );
    }
    if (scheduler.waitingWith(statements) > options.queueMax) {
      throw unavailable(`too many queries are waiting (${scheduler.waiting}); try again shortly`, RETRY_AFTER_SECONDS);
    }
  }

  /**
   * One statement's whole result streamed in `format` (an export): checked as `run` checks it (a
   * sandbox through the same scheduler, the same verdicts), then run on a connection of its own with
   * the sandbox's settings but no result limits. A refusal or failure, before or while it
   * streams, is the problem of statement 0. Each chunk is charged to the budget of results held
   * until the next is asked for (it is then written), so an export holds one chunk at a time; a
   * chunk that finds no room waits for it, and past the hold's `stallMs` the export fails (503).
   */
  async *export(database: string, sql: string, format: StreamFormat): AsyncIterable<Uint8Array> {
    this.admit(database, 1);
    const hold = this.resultHold();
    try {
      const statement = await this.scheduler.schedule(database, () => this.withSandbox((s) => this.verdict(s, database, sql)));
      for await (const chunk of this.storage.stream(statement, {}, format, { database, settings: sandboxSettings(this.options.limits, 'export'), sandboxed: true })) {
        await hold.chargeWaiting(chunk.byteLength);
        yield chunk;
        hold.release();
      }
    } catch (err) {
      throw statementProblem(0, err);
    } finally {
      hold.release();
    }
  }

  /**
   * One statement's answer in a ClickHouse output format, for ClickHouse's HTTP interface: checked
   * as `run` checks it, on the same scheduler, quota and metrics, then run with `settings` (a
   * sandbox's, readonly last) and the bound `params`. The answer is read whole, as `run` reads its
   * rows, refused past `maxResultBytes`, and charged to `hold` as it is read (on failure nothing
   * stays charged). Errors are thrown as they came (the guard's refusals, the engine's errors,
   * the budget's), for the caller to tell in ClickHouse's words.
   */
  async answer(
    database: string,
    sql: string,
    statement: { format: StreamFormat; params: Params; settings: Record<string, string>; maxResultBytes: number },
    hold: ResultHold,
  ): Promise<Uint8Array[]> {
    this.admit(database, 1);
    return this.scheduler.schedule(database, () =>
      this.withSandbox((sandbox) =>
        this.measured(
          database,
          async () => {
            const checked = await this.verdict(sandbox, database, sql, statement.params);
            const options = { database, settings: statement.settings, sandboxed: true };
            return this.charged(database, () => readBounded(this.storage.stream(checked, statement.params, statement.format, options), statement.maxResultBytes, hold));
          },
          (chunks) => ({ format: statement.format, bytes: chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0) }),
        ),
      ),
    );
  }

  /** Forgets every verdict: which databases exist may have changed. */
  databasesChanged(): void {
    this.verdicts.clear();
  }

  /** Waits for running and queued statements, then closes the sandboxes. */
  async close(): Promise<void> {
    await this.scheduler.idle();
    await Promise.all(this.idle.splice(0).map((s) => s.close()));
  }

  private runOne<T>(sandbox: Sandbox, database: string, sql: string, shape: (text: string) => T): Promise<T> {
    return this.measured(
      database,
      async () => {
        const statement = await this.verdict(sandbox, database, sql);
        const text = await this.charged(database, () => sandbox.run(database, statement));
        return { text: text.length, answer: shape(text) };
      },
      ({ text }) => ({ chars: text }),
    ).then(({ answer }) => answer);
  }

  /** Runs one statement's `work`, logged and told to the metrics with how long it took. */
  private async measured<T>(database: string, work: () => Promise<T>, summary: (result: T) => Record<string, unknown>): Promise<T> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await work();
      this.log.debug('query', { database, ...summary(result), ms: Math.round(seconds() * 1000) });
      this.options.onStatement?.('ok', seconds());
      return result;
    } catch (err) {
      this.options.onStatement?.('error', seconds());
      throw err;
    }
  }

  /** Runs a checked statement, its time charged to the workspace's quota. */
  private async charged<T>(database: string, run: () => Promise<T>): Promise<T> {
    const ran = performance.now();
    return run().finally(() => this.quota?.charge(database, performance.now() - ran, performance.now()));
  }

  /** The statement to run for `sql`: the guard's verdict (remembered, or decided now), its property reads from columns where they can be. */
  private async verdict(sandbox: Sandbox, database: string, sql: string, params: Params = {}): Promise<string> {
    // A verdict holds for the parameters' values it was given (an Identifier's names a table).
    const key = Object.keys(params).length === 0 ? sql : JSON.stringify([sql, params]);
    let statement = this.verdicts.get(database, key);
    if (statement === undefined) {
      statement = await guardStatement(sandbox, database, sql, params);
      this.verdicts.set(database, key, statement);
    }
    return (await this.options.fastReads?.prepare(sandbox, database, statement, params, (rewritten) => approvedOrUndefined(sandbox, database, rewritten, params))) ?? statement;
  }

  /** The scheduler runs at most `concurrency` tasks, so a sandbox is always free when one starts. */
  private async withSandbox<T>(work: (sandbox: Sandbox) => Promise<T>): Promise<T> {
    const sandbox = this.idle.pop()!;
    try {
      return await work(sandbox);
    } finally {
      this.idle.push(sandbox);
    }
  }
}

/** The guard's verdict on `sql`, or undefined when it refuses it or the engine cannot parse it. */
async function approvedOrUndefined(sandbox: Sandbox, database: string, sql: string, params: Params): Promise<string | undefined> {
  try {
    return await guardStatement(sandbox, database, sql, params);
  } catch (err) {
    if (err instanceof SqlRefusal || err instanceof SqlUnsupported || err instanceof StorageQueryError) return undefined;
    throw err;
  }
}

/**
 * Every chunk of `chunks`, each charged to `hold`, or a refusal once they pass `maxBytes` or the
 * hold refuses one (which stops the statement); then what was charged is given back.
 */
async function readBounded(chunks: AsyncIterable<Uint8Array>, maxBytes: number, hold: ResultHold): Promise<Uint8Array[]> {
  const read: Uint8Array[] = [];
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw resultTooLarge(maxBytes);
      hold.charge(chunk.byteLength);
      read.push(chunk);
    }
  } catch (err) {
    hold.release();
    throw err;
  }
  return read;
}
