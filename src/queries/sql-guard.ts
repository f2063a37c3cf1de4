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

/**
 * Tables of the workspace's database that users do not read: on a cluster `events_local` holds
 * only the shard's part of the events the node serving the query happens to be in.
 */
const INTERNAL_TABLES = new Set(['events_local']);

/** Table functions that only generate rows. Every other one reaches files, URLs, servers or other databases. */
const GENERATORS = new Set(['numbers', 'numbers_mt', 'zeros', 'zeros_mt', 'generate_series', 'generateseries', 'generaterandom', 'values']);

/**
 * Functions that read something other than the statement's tables: server files, dictionaries,
 * Join tables, other tables' columns, model files. `readonly` does not stop `file()`.
 */
const OUTSIDE_READERS = /^(?:file|dict[a-z]*|joinget(?:ornull)?|hascolumnintable|catboostevaluate|naivebayesclassifier|modelevaluate)$/;

/**
 * Functions that tell about the server rather than the workspace's data: its settings and files,
 * its host, build, uptime, disks, accounts, and the introspection of its machine code. `version()`
 * stays allowed: the engine's version is no secret (docs/sql.md names it) and users check
 * features with it; `currentDatabase()` answers the workspace's own database.
 */
const SERVER_INTROSPECTION =
  /^(?:getserversetting|getmergetreesetting|getmacro|hostname|fqdn|fullhostname|filesystem[a-z]*|buildid|uptime|serveruuid|displayname|getoskernelversion|getserverport|tcpport|revision|currentuser|user|currentprofiles|enabledprofiles|defaultprofiles|currentroles|enabledroles|defaultroles|zookeepersessionuptime|logtrace|addresstoline(?:withinlines)?|addresstosymbol|demangle|getclienthttpheader)$/;

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
 * text travels as a bound parameter, so nothing of it runs.
 */
async function canonicalForm(sandbox: Sandbox, database: string, sql: string): Promise<string> {
  try {
    return (await column(sandbox, database, 'SELECT formatQuery({sql:String}) AS statement', 'statement', { sql }))[0]!;
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
function checkSyntax(ast: AstNode[], canonical: string, database: string): void {
  const root = ast[0];
  if (!root || ast.length > 1) throw new SqlRefusal('only a single SELECT statement may run');
  if (root.kind !== 'SelectWithUnionQuery') {
    throw new SqlRefusal(`only SELECT statements may run, and this is ${describeKind(root, canonical)}: queries are read-only`);
  }
  for (const clause of root.children.slice(1)) {
    if (clause.kind === 'Identifier') throw new SqlUnsupported(`FORMAT ${clause.name} is not supported: results are always JSON rows`);
    throw new SqlRefusal('INTO OUTFILE is not allowed: it writes a file on the server');
  }
  const known = namesDefined(ast, database);
  for (const node of walk(ast)) {
    // readonly refuses a SETTINGS clause of the outer query, but lets one in a subquery apply.
    if (node.kind === 'Set') throw new SqlRefusal('SETTINGS clauses are not allowed: the limits of a statement cannot be changed');
    if (node.kind === 'TableIdentifier' || node.kind === 'Identifier') checkName(node, database, known);
    if (node.kind === 'TableIdentifier' && INTERNAL_TABLES.has(node.name.split('.').pop()!)) {
      throw new SqlRefusal(`${node.name} is internal (a shard's part of the events on a cluster): read events, which covers every shard`);
    }
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
    } else if (SERVER_INTROSPECTION.test(fn)) {
      throw new SqlRefusal(`the function ${node.name} is not allowed: it tells about the server, not about this workspace's data`);
    }
  }
}

/**
 * The names a statement defines, which a dotted name may start with: its tables (`events.userId`),
 * its aliases of tables, subqueries, columns and ARRAY JOIN (`e.userId`, `t.a`), the parameters
 * of its lambdas, and the workspace's database itself.
 */
function namesDefined(ast: AstNode[], database: string): Set<string> {
  const names = new Set([database]);
  for (const node of walk(ast)) {
    if (node.alias !== undefined) names.add(node.alias);
    if (node.kind === 'TableIdentifier') names.add(node.name.split('.').pop()!);
    if (node.kind === 'Function' && node.name === 'lambda') {
      for (const param of walk(node.children[0]?.children[0]?.children ?? [])) if (param.kind === 'Identifier') names.add(param.name);
    }
  }
  return names;
}

/**
 * A table named with a database must be in the workspace's database, and a dotted name must
 * start with a name the statement defines (or that database). Anything else (`other.events`,
 * `x IN other.events`, `other.event`) is refused with the same words whether or not a database
 * of that name exists, so refusals tell nothing about other workspaces.
 */
function checkName(node: AstNode, database: string, known: ReadonlySet<string>): void {
  const parts = node.name.split('.');
  if (parts.length < 2 || known.has(node.name)) return;
  const first = parts[0]!;
  if (first === database || (node.kind === 'Identifier' && known.has(first))) return;
  throw new SqlRefusal(`${node.name} is outside this workspace: statements may read only the tables of the workspace's own database (such as events)`);
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
    if (table !== undefined && INTERNAL_TABLES.has(table.slice(database.length + 1)) && table.startsWith(`${database}.`)) {
      throw new SqlRefusal(`${table} is internal (a shard's part of the events on a cluster): read events, which covers every shard`);
    }
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
  const canonical = await canonicalForm(sandbox, database, sql);
  const ast = parseExplainAst(await column(sandbox, database, `EXPLAIN AST ${canonical}`, 'explain'));
  checkSyntax(ast, canonical, database);
  await checkResolvedTables(sandbox, database, canonical);
  return canonical;
}
