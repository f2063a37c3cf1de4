import { OBJECT_COLUMNS, READ_COLUMN_PREFIX, READ_FUNCTIONS, signatureOf, unquoteLiteral } from './json-read';

/**
 * What ClickHouse's analyzer says a statement reads, from its `EXPLAIN QUERY TREE` (one node a
 * line, two spaces of indent a level): which table each read by constant keys reads its column
 * from, which table each stored read's column comes from, the tables, and the result columns.
 */
export interface TreeReads {
  /** Per read signature: the source of each of its calls (`__table1 ws.events`, or '' for a source that is no table), and its result type. */
  reads: Map<string, { sources: string[]; type: string }>;
  /** Per stored read's column: the source of each reference to it. */
  columns: Map<string, string[]>;
  /** Every table and table function the statement reads, in order. */
  tables: string[];
  /** The names and types of the result columns of every SELECT in it, in order. */
  projections: string[];
}

interface Node {
  text: string;
  children: Node[];
}

function parseTree(lines: readonly string[]): Node[] {
  const roots: Node[] = [];
  const path: Array<{ depth: number; node: Node }> = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const depth = line.length - line.trimStart().length;
    const node: Node = { text: line.trim(), children: [] };
    while (path.length > 0 && path[path.length - 1]!.depth >= depth) path.pop();
    (path.length > 0 ? path[path.length - 1]!.node.children : roots).push(node);
    path.push({ depth, node });
  }
  return roots;
}

function* walk(nodes: readonly Node[]): Generator<Node> {
  for (const node of nodes) {
    yield node;
    yield* walk(node.children);
  }
}

const TABLE = /^TABLE id: (\d+), alias: (\S+), table_name: (\S+)/;
const TABLE_FUNCTION = /^TABLE_FUNCTION id: \d+, alias: \S+, table_function_name: (\S+)/;
const FUNCTION = /^FUNCTION id: \d+, function_name: (\w+), function_type: ordinary, result_type: (.+)$/;
const OBJECT_COLUMN = /^COLUMN id: \d+, column_name: (\w+), result_type: String, source_id: (\d+)$/;
/**
 * A stored read's column, or a subcolumn of it: the analyzer reads `c != ''` of a String column as
 * its `c.size` (optimize_functions_to_subcolumns), and `isNull(c)` of a Nullable one as `c.null`.
 */
const READ_COLUMN = new RegExp(`^COLUMN id: \\d+, column_name: (${READ_COLUMN_PREFIX}[0-9a-f]{16})(?:\\.\\w+)*, result_type: .+, source_id: (\\d+)$`);
const CONSTANT = /^CONSTANT id: \d+, constant_value: (.+), constant_value_type: (\w+)$/;

/** A constant argument's value (a string, an integer), or undefined for any other. */
function constantValue(node: Node | undefined): string | number | undefined {
  const m = node && CONSTANT.exec(node.text);
  if (!m) return undefined;
  if (m[2] === 'String') return unquoteLiteral(m[1]!);
  // Integers are written with their type: `UInt64_1`, `Int64_-2`.
  const integer = /^U?Int64_(-?\d+)$/.exec(m[1]!);
  return /^U?Int\d+$/.test(m[2]!) && integer ? Number(integer[1]) : undefined;
}

/** A read function's signature and source table id, or undefined when it is not a read by constant keys of a JSON object column. */
function readOf(fn: string, node: Node): { signature: string; sourceId: string } | undefined {
  const args = node.children.find((c) => c.text === 'ARGUMENTS')?.children[0]?.children ?? [];
  const column = args[0] && OBJECT_COLUMN.exec(args[0].text);
  if (!column || !OBJECT_COLUMNS.has(column[1]!)) return undefined;
  const values = args.slice(1).map(constantValue);
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  return { signature: signatureOf({ fn, object: column[1]!, args: values as Array<string | number> }), sourceId: column[2]! };
}

export function treeReads(lines: readonly string[]): TreeReads {
  const nodes = [...walk(parseTree(lines))];
  const sources = new Map<string, string>();
  const tables: string[] = [];
  for (const node of nodes) {
    const table = TABLE.exec(node.text);
    if (table) {
      sources.set(table[1]!, `${table[2]} ${table[3]}`);
      tables.push(table[3]!);
    }
    const fn = TABLE_FUNCTION.exec(node.text);
    if (fn) tables.push(`${fn[1]}()`);
  }
  const result: TreeReads = { reads: new Map(), columns: new Map(), tables, projections: [] };
  for (const node of nodes) {
    if (node.text === 'PROJECTION COLUMNS') result.projections.push(...node.children.map((c) => c.text));
    const fn = FUNCTION.exec(node.text);
    const read = fn && READ_FUNCTIONS.has(fn[1]!) ? readOf(fn[1]!, node) : undefined;
    if (read) {
      if (!result.reads.has(read.signature)) result.reads.set(read.signature, { sources: [], type: fn![2]! });
      result.reads.get(read.signature)!.sources.push(sources.get(read.sourceId) ?? '');
    }
    const column = READ_COLUMN.exec(node.text);
    if (column) result.columns.set(column[1]!, [...(result.columns.get(column[1]!) ?? []), sources.get(column[2]!) ?? '']);
  }
  return result;
}
