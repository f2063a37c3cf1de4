import { StorageQueryError, type Params, type Sandbox } from '../storage/storage';
import { literalString, parseExplainAst, walk, type AstNode } from './explain-ast';
import { functionVerdict, isAllowedAggregate } from './function-allowlist';
import { isSelectSyntax } from './syntax-kinds';
import { typeProblem } from './type-grammar';

/** A statement the sandbox will not run, with the reason (403). */
export class SqlRefusal extends Error {
  override readonly name = 'SqlRefusal';
}

/** A statement that cannot run as written, through no fault of the guard's rules (400). */
export class SqlUnsupported extends Error {
  override readonly name = 'SqlUnsupported';
}

/**
 * Tables of the workspace's database that users do not read: on a cluster `events_local` and
 * `visits_local` hold only the shard's part the node serving the query happens to be in.
 */
export const INTERNAL_TABLES: ReadonlySet<string> = new Set(['events_local', 'visits_local']);

/**
 * The table functions a statement may read from: generators of numbers, whose arguments must be
 * whole-number literals. Every other one reads files, URLs, servers or other databases, or takes a
 * structure string, which the engine reads as column definitions whose ALIAS or DEFAULT
 * expressions it evaluates (`generateRandom('a String ALIAS file(...)')`).
 */
const TABLE_FUNCTIONS = new Set(['numbers', 'numbers_mt', 'generate_series', 'generateseries']);
const WHOLE_NUMBER_LITERAL = /^U?Int\d+_\d+$/;

/**
 * The IN family, `IgnoreSet` variants included. ClickHouse's analyzer resolves a name given to
 * any of them as a table when it is not a column (`x IN db.t`), so every name there is judged
 * as a table is.
 */
const IN_FUNCTIONS = /^(?:global)?(?:not)?(?:null)?in(?:ignoreset)?$/;

/**
 * Functions that take a type name as a string, by the argument that holds it (-1: the last). The
 * engine parses that string as a type, so the guard's type grammar judges it first.
 */
const TYPE_ARGUMENT: Record<string, number> = {
  CAST: 1,
  _CAST: 1,
  accurateCast: 1,
  accurateCastOrNull: 1,
  accurateCastOrDefault: 1,
  reinterpret: 1,
  variantElement: 1,
  dynamicElement: 1,
  defaultValueOfTypeName: 0,
  JSONExtract: -1,
  JSONExtractCaseInsensitive: -1,
  JSONExtractKeysAndValues: -1,
  JSONExtractKeysAndValuesCaseInsensitive: -1,
};

/** Functions whose first argument names an aggregate function, optionally with literal parameters. */
const AGGREGATE_NAME_ARGUMENT = new Set(['arrayReduce', 'arrayReduceInRanges', 'initializeAggregation']);
const AGGREGATE_NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?:\(\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)*\s*\))?$/;

/** Where a statement without FROM reads its one row; the analyzer adds it, a user cannot name it. */
const IMPLICIT_TABLE = 'system.one';

/**
 * A back-quoted name as the formatter writes it. Inside, a backslash starts an escape (a line
 * break, a quote) and parentheses would read as the notes `EXPLAIN AST` puts after a name.
 */
const QUOTED_NAME = /`((?:[^`\\]|\\.)*)`/g;
const UNSAFE_IN_NAME = /[\\()]/;

/** One row of a statement's result, as text. */
async function firstRow(sandbox: Sandbox, database: string, sql: string, params?: Params): Promise<Record<string, string>> {
  const text = await sandbox.inspect(database, sql, params);
  return JSON.parse(text.slice(0, text.indexOf('\n'))) as Record<string, string>;
}

/** One column of a statement's rows, as text. */
async function column(sandbox: Sandbox, database: string, sql: string, name: string, params?: Params): Promise<string[]> {
  const text = await sandbox.inspect(database, sql, params);
  return text
    .split('\n')
    .filter((line) => line)
    .map((line) => String((JSON.parse(line) as Record<string, unknown>)[name]));
}

/**
 * Step 1, the parser alone: one statement, in ClickHouse's canonical form (comments gone), and
 * that form with every literal replaced by `?`, so what is left in quotes can only be a name. The
 * text travels as a bound parameter, so nothing of it runs.
 */
async function canonicalForm(sandbox: Sandbox, database: string, sql: string): Promise<{ statement: string; shape: string }> {
  try {
    const row = await firstRow(
      sandbox,
      database,
      'SELECT formatQuery({sql:String}) AS statement, normalizeQueryKeepNames(statement) AS shape',
      { sql },
    );
    return { statement: row.statement!, shape: row.shape! };
  } catch (err) {
    if (err instanceof StorageQueryError && err.message.includes('Multi-statements are not allowed')) {
      throw new SqlRefusal('the string holds several statements; send each as its own entry of queries');
    }
    throw err;
  }
}

/**
 * `EXPLAIN AST` writes a name as it is, one node a line, so a name holding a line break or the
 * text of a note could pass for nodes that are not there. Such names are refused before the tree
 * is read; with them gone, each line is one node and each dot separates two parts of a name.
 */
function checkNames(shape: string): void {
  for (const [, name] of shape.matchAll(QUOTED_NAME)) {
    if (UNSAFE_IN_NAME.test(name!)) {
      throw new SqlRefusal(`the name \`${name}\` is not allowed: back-quoted names may not hold backslashes (escapes, line breaks) or parentheses`);
    }
  }
}

function describeKind(root: AstNode, canonical: string): string {
  const keyword = /^[A-Za-z]+(?: [A-Za-z]+)?/.exec(canonical)?.[0]?.toUpperCase();
  return keyword ? `a ${keyword} statement` : `a ${root.kind}`;
}

const outside = (name: string) =>
  new SqlRefusal(`${name} is outside this workspace: statements may read only the tables of the workspace's own database (such as events)`);

/**
 * A name where ClickHouse may look a table up: `name` alone (a CTE of the statement, else a table
 * of the current database, the workspace's) or `database.name` of the workspace's database. Any
 * other dotted name is refused, so a name whose parts hold dots cannot pass for the workspace's:
 * `a.b` is refused whether it is one part or two unless `a` is the workspace's database, and
 * three parts are never a table of the workspace.
 */
function checkTableName(name: string, database: string): void {
  const parts = name.split('.');
  if (parts.length > 2 || (parts.length === 2 && parts[0] !== database)) throw outside(name);
  if (INTERNAL_TABLES.has(parts[parts.length - 1]!)) {
    throw new SqlRefusal(`${name} is internal (a shard's part on a cluster): read ${parts[parts.length - 1]!.replace(/_local$/, '')}, which covers every shard`);
  }
}

/**
 * The arguments of a function node: its first expression list. A parametric function's parameters
 * (`quantile(0.5)(x)`) come second, a window function's definition after it.
 */
function argumentsOf(fn: AstNode): AstNode[] {
  const first = fn.children[0];
  return first?.kind === 'ExpressionList' ? first.children : [];
}

/**
 * Step 2, still the parser alone (EXPLAIN AST executes nothing): a SELECT that can name only the
 * workspace's tables. Every place where ClickHouse's analyzer turns a name into a table is judged
 * as a table, whatever the statement defines: table expressions (FROM, JOIN, in every subquery
 * and CTE), the names given to table functions and to the IN family. Anywhere else a name is a
 * column, and a dotted one must start with a name the statement defines. This must hold before
 * the analyzer sees the statement, because the analyzer evaluates scalar subqueries while
 * resolving, and an error it raised there (a failed CAST of another workspace's value, say)
 * would carry that value back in its message.
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
    if (node.kind === 'ColumnsApplyTransformer') throw new SqlRefusal('APPLY is not allowed: the parser does not show which function it applies; call the function on the columns instead');
    if (!isSelectSyntax(node.kind)) throw new SqlUnsupported(`the sandbox does not run statements holding ${node.kind} syntax`);
    // readonly refuses a SETTINGS clause of the outer query, but lets one in a subquery apply.
    if (node.kind === 'Set') throw new SqlRefusal('SETTINGS clauses are not allowed: the limits of a statement cannot be changed');
    if (node.kind === 'TableIdentifier') checkTableName(node.name, database);
    else if (node.kind === 'Identifier' && !isTableArgument(node)) checkColumnName(node.name, database, known);
    if (node.kind === 'Function') checkFunction(node, database);
  }
}

/** A name given to a table function or to the IN family, where the analyzer may take it for a table. */
function isTableArgument(node: AstNode): boolean {
  const fn = node.parent?.parent;
  if (fn?.kind !== 'Function' || node.parent !== fn.children[0]) return false;
  return fn.parent?.kind === 'TableExpression' || IN_FUNCTIONS.test(fn.name.toLowerCase());
}

function checkFunction(node: AstNode, database: string): void {
  if (node.parent?.kind === 'TableExpression') return checkTableFunction(node);
  const verdict = functionVerdict(node.name);
  if (!verdict.allowed) throw new SqlRefusal(`the function ${node.name} is not allowed: ${verdict.reason}`);
  const args = argumentsOf(node);
  const typeAt = Object.hasOwn(TYPE_ARGUMENT, verdict.name) ? TYPE_ARGUMENT[verdict.name] : undefined;
  if (typeAt !== undefined) {
    const arg = typeAt < 0 ? args.at(typeAt) : args[typeAt];
    if (arg) checkTypeArgument(node.name, arg);
  }
  if (AGGREGATE_NAME_ARGUMENT.has(verdict.name) && args[0]) checkAggregateArgument(node.name, args[0]);
  if (IN_FUNCTIONS.test(verdict.name.toLowerCase())) {
    for (const arg of args) if (arg.kind === 'Identifier') checkTableName(arg.name, database);
  }
}

/** A table function must be a generator of numbers given whole-number literals. */
function checkTableFunction(node: AstNode): void {
  if (!TABLE_FUNCTIONS.has(node.name.toLowerCase())) {
    throw new SqlRefusal(
      `the table function ${node.name} is not allowed: statements read the workspace's tables, or numbers(), numbers_mt() and generate_series() given whole numbers`,
    );
  }
  for (const arg of argumentsOf(node)) {
    if (arg.kind !== 'Literal' || !WHOLE_NUMBER_LITERAL.test(arg.name)) {
      throw new SqlRefusal(`the arguments of ${node.name}() must be whole numbers written out (such as numbers(10) or generate_series(1, 5))`);
    }
  }
}

/** A type name given as a string must be a literal that the guard's type grammar accepts. */
function checkTypeArgument(fn: string, arg: AstNode): void {
  const text = literalString(arg);
  if (text === undefined) throw new SqlRefusal(`the type argument of ${fn} must be a string literal naming a type (such as 'UInt64')`);
  const problem = typeProblem(text);
  if (problem !== undefined) throw new SqlRefusal(`the type '${text}' given to ${fn} is not allowed: ${problem}`);
}

/** An aggregate function named in a string must be an allowed one, with literal parameters at most. */
function checkAggregateArgument(fn: string, arg: AstNode): void {
  const text = literalString(arg);
  const name = text === undefined ? undefined : AGGREGATE_NAME.exec(text)?.[1];
  if (name === undefined || !isAllowedAggregate(name)) {
    throw new SqlRefusal(`the first argument of ${fn} must be a string literal naming an allowed aggregate function (such as 'sum' or 'quantile(0.5)')`);
  }
}

/**
 * The names a statement defines, which a dotted column name may start with: its tables
 * (`events.userId`), its aliases of tables, subqueries, columns and ARRAY JOIN (`e.userId`,
 * `t.a`), the parameters of its lambdas, and the workspace's database itself.
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
 * A dotted column name must start with a name the statement defines (or the workspace's
 * database). Anything else (`other.event`, `no_such_database.event`) is refused with the same
 * words whether or not a database of that name exists, so refusals tell nothing about other
 * workspaces. Only the first part counts: an alias written as `` `other.events` `` defines
 * `other.events`, not `other`.
 */
function checkColumnName(name: string, database: string, known: ReadonlySet<string>): void {
  const parts = name.split('.');
  const first = parts[0]!;
  if (first === name || known.has(first)) return;
  if (JSON_TEXT_COLUMNS.has(first)) throw jsonPath(first, parts.slice(1));
  throw outside(name);
}

/** Columns holding an object as JSON text (docs/sql.md): `properties.plan` is how HogQL reads them, not ClickHouse. */
const JSON_TEXT_COLUMNS = new Set(['properties', 'traits', 'context']);

/** 400, not the 403 of a name outside the workspace: the statement only needs another spelling. */
function jsonPath(column: string, keys: string[]): SqlUnsupported {
  const path = keys.map((k) => `'${k.replaceAll("'", "\\'")}'`).join(', ');
  return new SqlUnsupported(
    `${column}.${keys.join('.')} reads no property here: ${column} is JSON text, so read a value with JSONExtractString(${column}, ${path}), or JSONExtract(${column}, ${path}, 'UInt64') for a number (docs/sql.md)`,
  );
}

/**
 * Step 3, the analyzer: now that every name is known to be the workspace's, it resolves what the
 * statement really reads (CTEs, subqueries, joins, IN). Each table must be in the workspace's
 * database; this repeats step 2 with ClickHouse's own resolution, in case some syntax reaches a
 * table without naming it.
 */
async function checkResolvedTables(sandbox: Sandbox, database: string, canonical: string, params: Params): Promise<void> {
  for (const line of await column(sandbox, database, `EXPLAIN QUERY TREE ${canonical}`, 'explain', params)) {
    const table = /\btable_name: (.*)$/.exec(line)?.[1];
    if (table !== undefined && table !== IMPLICIT_TABLE) checkTableName(table, database);
    const fn = /\btable_function_name: (\w+)/.exec(line)?.[1];
    if (fn !== undefined && !TABLE_FUNCTIONS.has(fn.toLowerCase())) throw new SqlRefusal(`the table function ${fn} is not allowed`);
  }
}

/**
 * Decides whether `sql` may run in `database`, with ClickHouse's own parser and analyzer rather
 * than patterns over the text, so string literals and comments never matter. Returns the
 * statement to run: its canonical form, proven to be one statement. Throws SqlRefusal (403),
 * SqlUnsupported (400), or the engine's StorageQueryError for a statement that does not parse
 * or resolve (400). No statement reaches the analyzer (step 3) before steps 1 and 2, which ask
 * the parser alone, have shown that every table it can name is the workspace's.
 *
 * `params` are the values of the statement's `{name:Type}` parameters, bound as the statement will
 * run with them. The parser substitutes them in `EXPLAIN AST` (step 2), so a parameter of type
 * Identifier shows there as the table it names and is judged as one; the verdict holds for these
 * values only. The canonical form keeps the placeholders (step 1 parses the text alone).
 */
export async function guardStatement(sandbox: Sandbox, database: string, sql: string, params: Params = {}): Promise<string> {
  const { statement, shape } = await canonicalForm(sandbox, database, sql);
  checkNames(shape);
  const ast = parseExplainAst(await column(sandbox, database, `EXPLAIN AST ${statement}`, 'explain', params));
  checkSyntax(ast, statement, database);
  await checkResolvedTables(sandbox, database, statement, params);
  return statement;
}
