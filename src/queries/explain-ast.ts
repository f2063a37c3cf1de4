/**
 * The text of `EXPLAIN AST` as a tree. Each line is a node, indented one space per level:
 * `TableIdentifier ws.events (alias e)`, `Function numbers (alias n) (children 1)`.
 */

export interface AstNode {
  /** The node kind: `SelectWithUnionQuery`, `TableIdentifier`, `Function`, ... */
  kind: string;
  /** What follows the kind, without the `(alias ...)` and `(children N)` notes: a name or a value. */
  name: string;
  /** The `(alias ...)` note: the name the statement gives this node. */
  alias: string | undefined;
  parent: AstNode | undefined;
  children: AstNode[];
}

const CHILDREN_NOTE = / \(children \d+\)$/;
const ALIAS_NOTE = / \(alias ([^)]*)\)$/;

export function parseExplainAst(lines: readonly string[]): AstNode[] {
  const roots: AstNode[] = [];
  const path: AstNode[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const depth = line.length - line.trimStart().length;
    const noted = line.trim().replace(CHILDREN_NOTE, '');
    const alias = ALIAS_NOTE.exec(noted)?.[1];
    const text = noted.replace(ALIAS_NOTE, '');
    const space = text.indexOf(' ');
    const kind = space < 0 ? text : text.slice(0, space);
    const name = space < 0 ? '' : text.slice(space + 1);
    path.length = Math.min(path.length, depth);
    const parent = path[path.length - 1];
    const node: AstNode = { kind, name, alias, parent, children: [] };
    (parent ? parent.children : roots).push(node);
    path.push(node);
  }
  return roots;
}

/** Every node of the trees, depth first. */
export function* walk(nodes: readonly AstNode[]): Generator<AstNode> {
  for (const node of nodes) {
    yield node;
    yield* walk(node.children);
  }
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', a: '\x07', v: '\v', e: '\x1b' };

/**
 * The value of a string literal node (`Literal 'DateTime(\'UTC\')'`), undone from the quoted form
 * `EXPLAIN AST` prints; undefined for any other node.
 */
export function literalString(node: AstNode): string | undefined {
  if (node.kind !== 'Literal' || !/^'(?:[^'\\]|\\.)*'$/.test(node.name)) return undefined;
  return node.name.slice(1, -1).replace(/\\(x[0-9A-Fa-f]{2}|.)/g, (_, c: string) => (c.length === 3 ? String.fromCharCode(parseInt(c.slice(1), 16)) : (ESCAPES[c] ?? c)));
}
