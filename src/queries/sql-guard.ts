import { StorageQueryError, type Params, type Sandbox } from '../storage/storage';
import { parseExplainAst, walk, type AstNode } from './explain-ast';

/** A statement the sandbox will not run, with the reason (403). */
export class SqlRefusal extends Error {
  override readonly name = 'SqlRefusal';
}

/** A statement that cannot run as written, through no fault of the guard's rules (400). */
export class SqlUnsupported extends Error {
  override readonly name = 'SqlUnsupported';
}

/** Table functions that only generate rows. Every other one reaches files, URLs, servers or other databases. */
const GENERATORS = new Set(['numbers', 'numbers_mt', 'zeros', 'zeros_mt', 'generate_series', 'generateseries', 'generaterandom', 'values']);

/**
 * Functions that read something other than the statement's tables: server files, dictionaries,
 * Join tables, other tables' columns, model files. `readonly` does not stop `file()`.
 */
const OUTSIDE_READERS = /^(?:file|dict[a-z]*|joinget(?:ornull)?|hascolumnintable|catboostevaluate|naivebayesclassifier|modelevaluate)$/;

/** Where a statement without FROM reads its one row; the analyzer adds it, a user cannot name it. */
const IMPLICIT_TABLE = 'system.one';

/** One column of a statement's rows, as text. */
async function column(sandbox: Sandbox, database: string, sql: string, name: string, params?: Params): Promise<string[]> {
  const text = await sandbox.inspect(database, sql, params);
  return text
    .split('\n')
    .filter((line) => line)
    .map((line) => String((JSON.parse(line) as Record<string, unknown>)[name]));
}

/**
 * Step 1, the parser alone: one statement, in ClickHouse's canonical form (comments gone). The
 * text travels as a bound parameter, so nothing of it runs. The same round trip reads which
 * databases exist, for step 2.
 */
async function canonicalForm(sandbox: Sandbox, database: string, sql: string): Promise<{ canonical: string; databases: Set<string> }> {
  try {
    const text = await sandbox.inspect(
      database,
      'SELECT formatQuery({sql:String}) AS statement, (SELECT groupArray(name) FROM system.databases) AS databases',
      { sql },
    );
    const row = JSON.parse(text) as { statement: string; databases: string[] };
    return { canonical: row.statement, databases: new Set(row.databases) };
  } catch (err) {
    if (err instanceof StorageQueryError && err.message.includes('Multi-statements are not allowed')) {
      throw new SqlRefusal('the string holds several statements; send each as its own entry of queries');
    }
    throw err;
  }
}

function describeKind(root: AstNode, canonical: string): string {
  const keyword = /^[A-Za-z]+(?: [A-Za-z]+)?/.exec(canonical)?.[0]?.toUpperCase();
  return keyword ? `a ${keyword} statement` : `a ${root.kind}`;
}

/**
 * Step 2, still the parser alone (EXPLAIN AST executes nothing): a SELECT that names only the
 * workspace's tables. This must hold before the analyzer sees the statement, because the
 * analyzer evaluates scalar subqueries while resolving, and an error it raised there (a failed
 * CAST of another workspace's value, say) would carry that value back in its message.
 */
function checkSyntax(ast: AstNode[], canonical: string, database: string, databases: ReadonlySet<string>): void {
  const root = ast[0];
  if (!root || ast.length > 1) throw new SqlRefusal('only a single SELECT statement may run');
  if (root.kind !== 'SelectWithUnionQuery') {
    throw new SqlRefusal(`only SELECT statements may run, and this is ${describeKind(root, canonical)}: queries are read-only`);
  }
  for (const clause of root.children.slice(1)) {
    if (clause.kind === 'Identifier') throw new SqlUnsupported(`FORMAT ${clause.name} is not supported: results are always JSON rows`);
    throw new SqlRefusal('INTO OUTFILE is not allowed: it writes a file on the server');
  }
  for (const node of walk(ast)) {
    // readonly refuses a SETTINGS clause of the outer query, but lets one in a subquery apply.
    if (node.kind === 'Set') throw new SqlRefusal('SETTINGS clauses are not allowed: the limits of a statement cannot be changed');
    if (node.kind === 'TableIdentifier' || node.kind === 'Identifier') checkName(node, database, databases);
    if (node.kind !== 'Function') continue;
    const fn = node.name.toLowerCase();
    if (node.parent?.kind === 'TableExpression') {
      if (!GENERATORS.has(fn)) {
        throw new SqlRefusal(
          `the table function ${node.name} is not allowed: it reaches files, URLs, servers or other databases (allowed: numbers, zeros, generate_series, generateRandom, values)`,
        );
      }
    } else if (OUTSIDE_READERS.test(fn)) {
      throw new SqlRefusal(`the function ${node.name} is not allowed: it reads outside this workspace's tables`);
    }
  }
}

/**
 * A table named with a database must be in the workspace's database. Any other dotted name
 * whose first part is an existing database is refused too, since ClickHouse may read it as a
 * table (`x IN other.events`); a table alias named like a database is refused with it.
 */
function checkName(node: AstNode, database: string, databases: ReadonlySet<string>): void {
  const parts = node.name.split('.');
  if (parts.length < 2) return;
  const first = parts[0]!;
  if (first === database) return;
  if (node.kind === 'TableIdentifier' || databases.has(first)) {
    throw new SqlRefusal(
      `${node.name} is outside this workspace: statements may read only the tables of the workspace's own database (such as events)`,
    );
  }
}

/**
 * Step 3, the analyzer: now that every name is known to be the workspace's, it resolves what the
 * statement really reads (CTEs, subqueries, joins, IN). Each table must be in the workspace's
 * database; this repeats step 2 with ClickHouse's own resolution, in case some syntax reaches a
 * table without naming it.
 */
async function checkResolvedTables(sandbox: Sandbox, database: string, canonical: string): Promise<void> {
  for (const line of await column(sandbox, database, `EXPLAIN QUERY TREE ${canonical}`, 'explain')) {
    const table = /\btable_name: (.*)$/.exec(line)?.[1];
    if (table !== undefined && table !== IMPLICIT_TABLE && !table.startsWith(`${database}.`)) {
      throw new SqlRefusal(`${table} is outside this workspace: statements may read only the tables of the workspace's own database`);
    }
    const fn = /\btable_function_name: (\w+)/.exec(line)?.[1];
    if (fn !== undefined && !GENERATORS.has(fn.toLowerCase())) throw new SqlRefusal(`the table function ${fn} is not allowed`);
  }
}

/**
 * Decides whether `sql` may run in `database`, with ClickHouse's own parser and analyzer rather
 * than patterns over the text, so string literals and comments never matter. Returns the
 * statement to run: its canonical form, proven to be one statement. Throws SqlRefusal (403),
 * SqlUnsupported (400), or the engine's StorageQueryError for a statement that does not parse
 * or resolve (400).
 */
export async function guardStatement(sandbox: Sandbox, database: string, sql: string): Promise<string> {
  const { canonical, databases } = await canonicalForm(sandbox, database, sql);
  const ast = parseExplainAst(await column(sandbox, database, `EXPLAIN AST ${canonical}`, 'explain'));
  checkSyntax(ast, canonical, database, databases);
  await checkResolvedTables(sandbox, database, canonical);
  return canonical;
}
