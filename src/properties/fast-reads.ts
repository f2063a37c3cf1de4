import type { Logger } from '../log';
import { VerdictCache } from '../queries/verdict-cache';
import { StorageQueryError, type Params, type Sandbox, type Storage } from '../storage/storage';
import { readColumnName } from './json-read';
import { readCalls, replaceCalls, type ReadCall } from './read-calls';
import type { ReadColumns } from './read-columns';
import { treeReads, type TreeReads } from './read-tree';

/** Statements whose analysis, and whether their rewrite holds, are remembered, at most, and for how long. */
const REMEMBERED = 1000;
const REMEMBERED_MS = 60_000;
/** Statements that make a read (by the same keys, of the same type) before it gets a column. */
const READS_BEFORE_STORING = 2;
/** Reads counted per workspace, at most; the first counted are forgotten first. */
const COUNTED_READS = 10_000;

/**
 * The statement to run for a statement of the service's own (a listing's), its placeholders bound
 * to `params`; `counted: false` for a statement whose reads another of the same request counted.
 */
export type PrepareStatement = (sql: string, params: Params, counted?: boolean) => Promise<string>;
/** Statements as they are written. */
export const asWritten: PrepareStatement = async (sql) => sql;
/** A statement's `EXPLAIN QUERY TREE`, one line of it each. */
type Explain = (sql: string, params: Params) => Promise<string[]>;
/**
 * Judges a rewritten statement before anything analyses it: the text to run, or undefined when it
 * may not run. User SQL is judged again by the SQL guard: the rewrite works on text, and a read it
 * found where ClickHouse sees a string literal (a tokenizer and the engine disagreeing) would put
 * the column's back-quoted name, and whatever the read's keys spell, into live SQL.
 */
export type ApproveRewrite = (statement: string) => Promise<string | undefined>;
const unjudged: ApproveRewrite = async (statement) => statement;

/**
 * Property reads at the speed of a column (docs/architecture.md#fast-properties). A statement's
 * reads by constant keys of the events' JSON columns (`JSONExtract(properties, 'plan', 'String')`)
 * are counted, and one made by READS_BEFORE_STORING statements gets a column that stores it
 * (read-columns.ts). A statement whose reads have columns runs with each read replaced by its
 * column, named as the read was, once ClickHouse's analyzer has shown for the rewritten statement
 * that each such column comes from the very table the read's JSON column came from, that it reads
 * the same tables and that its result columns have the same names and types; otherwise, or when
 * the analyzer refuses it, the statement runs as written. A stored read is the same expression
 * computed when the row was inserted, so its values are the read's own.
 */
export class FastReads {
  private readonly analyses = new VerdictCache<TreeReads>(REMEMBERED, REMEMBERED_MS);
  /** The statement each rewrite runs as, or false when the rewrite does not hold. */
  private readonly rewrites = new VerdictCache<string | false>(REMEMBERED, REMEMBERED_MS);
  private readonly counts = new Map<string, Map<string, number>>();

  constructor(
    private readonly storage: Storage,
    private readonly columns: ReadColumns,
    private readonly log: Logger,
  ) {}

  /**
   * The statement to run for user SQL or an insight's, `sql` (its `{name:Type}` placeholders bound
   * to `params`), on `sandbox` in `database`; `approve` judges a rewrite before it is analysed.
   */
  prepare(sandbox: Sandbox, database: string, sql: string, params: Params = {}, approve: ApproveRewrite = unjudged): Promise<string> {
    const explain: Explain = async (statement, bound) =>
      (await sandbox.inspect(database, statement, bound)).split('\n').filter((l) => l).map((l) => String((JSON.parse(l) as { explain: string }).explain));
    return this.rewrite(explain, database, sql, params, true, approve);
  }

  /** The same for a statement of the service's own, run on its sessions (a listing, an export of events). */
  prepareOwn(database: string, sql: string, params: Params = {}, counted = true): Promise<string> {
    return this.rewrite((statement, bound) => this.storage.queryLines(statement, bound), database, sql, params, counted);
  }

  private async rewrite(explain: Explain, database: string, sql: string, params: Params, counted = true, approve = unjudged): Promise<string> {
    const calls = readCalls(sql, params);
    if (calls.length === 0) return sql;
    const key = Object.keys(params).length === 0 ? sql : JSON.stringify([sql, params]);
    let analysis = this.analyses.get(database, key);
    if (!analysis) {
      analysis = await this.explained(explain, sql, params);
      if (!analysis) return sql;
      this.analyses.set(database, key, analysis);
    }
    const ofEvents = this.readsOfEvents(database, calls, analysis);
    const stored = await this.columns.names(database);
    const rewritable = ofEvents.filter((c) => stored.has(readColumnName(c.signature)));
    if (counted) this.count(database, ofEvents.filter((c) => !rewritable.includes(c)), analysis);
    if (rewritable.length === 0) return sql;
    const rewritten = replaceCalls(sql, rewritable, (c) => readColumnName(c.signature));
    const rewrittenKey = key === sql ? rewritten : JSON.stringify([rewritten, params]);
    let runs = this.rewrites.get(database, rewrittenKey);
    if (runs === undefined) {
      const approved = await approve(rewritten);
      if (approved === undefined) this.log.warn('property reads left as written: the rewritten statement was refused', { database });
      const after = approved === undefined ? undefined : await this.explained(explain, approved, params);
      runs = approved !== undefined && after !== undefined && sameReads(analysis, after, rewritable) ? approved : false;
      if (approved !== undefined && runs === false) this.log.debug('property reads left as written: the rewritten statement reads otherwise', { database });
      this.rewrites.set(database, rewrittenKey, runs);
    }
    return runs === false ? sql : runs;
  }

  /** Forgets what it remembers of statements: which databases exist may have changed. */
  databasesChanged(databases: ReadonlySet<string>): void {
    this.analyses.clear();
    this.rewrites.clear();
    for (const database of this.counts.keys()) if (!databases.has(database)) this.counts.delete(database);
    this.columns.retainOnly(databases);
  }

  /** The analyzer's account of `sql`, or undefined when it refuses it. */
  private async explained(explain: Explain, sql: string, params: Params): Promise<TreeReads | undefined> {
    try {
      return treeReads(await explain(`EXPLAIN QUERY TREE ${sql}`, params));
    } catch (err) {
      if (err instanceof StorageQueryError) return undefined;
      throw err;
    }
  }

  /** The calls whose read the analyzer shows reading only the workspace's events (the table, or the view over it). */
  private readsOfEvents(database: string, calls: readonly ReadCall[], analysis: TreeReads): ReadCall[] {
    const events = new Set([`${database}.events`, `${database}.events_with_persons`]);
    return calls.filter((c) => analysis.reads.get(c.signature)?.sources.every((source) => events.has(source.slice(source.indexOf(' ') + 1))));
  }

  /** Counts each read of one statement once (reads without a column); a read made often enough gets its column, in the background. */
  private count(database: string, calls: readonly ReadCall[], analysis: TreeReads): void {
    let counts = this.counts.get(database);
    if (!counts) this.counts.set(database, (counts = new Map()));
    for (const signature of new Set(calls.map((c) => c.signature))) {
      const seen = (counts.get(signature) ?? 0) + 1;
      counts.delete(signature);
      counts.set(signature, seen);
      if (counts.size > COUNTED_READS) counts.delete(counts.keys().next().value!);
      const type = analysis.reads.get(signature)!.type;
      if (seen >= READS_BEFORE_STORING && this.columns.storable(signature, type)) {
        this.columns.add(database, signature, type).catch((err) => this.log.warn('a property read could not be stored in a column', { database, read: signature, err }));
      }
    }
  }
}

/** How the service's own statements of `database` are prepared: by `fastReads` when there is one, else as written. */
export function ownStatements(fastReads: FastReads | undefined, database: string): PrepareStatement {
  return fastReads ? (sql, params, counted) => fastReads.prepareOwn(database, sql, params, counted) : asWritten;
}

/**
 * Whether the rewritten statement reads what the statement read: the same tables, the same result
 * columns (names and types), no call left of a rewritten read, and each of its columns read from
 * the tables (by alias) its read's calls read their JSON column from.
 */
function sameReads(before: TreeReads, after: TreeReads, rewritten: readonly ReadCall[]): boolean {
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(before.tables, after.tables) || !same(before.projections, after.projections)) return false;
  for (const signature of new Set(rewritten.map((c) => c.signature))) {
    const column = readColumnName(signature);
    const expected = [...(before.columns.get(column) ?? []), ...before.reads.get(signature)!.sources].sort();
    if (after.reads.has(signature) || !same(expected, [...(after.columns.get(column) ?? [])].sort())) return false;
  }
  return true;
}
