/**
 * The kinds of node a SELECT's tree may hold, as `EXPLAIN AST` names them. The guard knows where
 * each of these can name a table, and each prints everything it holds as child nodes, so nothing
 * is hidden from the guard; a kind it does not know (new syntax of a later engine) is refused
 * rather than let through unjudged. `APPLY(f)` (ColumnsApplyTransformer) prints neither the
 * function it applies nor its lambda, so it is not among them.
 */
const SELECT_SYNTAX = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'SelectQuery',
  'ExpressionList',
  'Identifier',
  'TableIdentifier',
  'Function',
  'Literal',
  'QueryParameter',
  'Asterisk',
  'QualifiedAsterisk',
  'ColumnsRegexpMatcher',
  'ColumnsListMatcher',
  'QualifiedColumnsRegexpMatcher',
  'QualifiedColumnsListMatcher',
  'ColumnsTransformerList',
  'ColumnsExceptTransformer',
  'ColumnsReplaceTransformer',
  'ColumnsReplaceTransformer::Replacement',
  'Subquery',
  'WithElement',
  'TablesInSelectQuery',
  'TablesInSelectQueryElement',
  'TableExpression',
  'TableJoin',
  'ArrayJoin',
  'OrderByElement',
  'InterpolateElement',
  'WindowDefinition',
  'WindowListElement',
  'SampleRatio',
  'Set',
]);

export const isSelectSyntax = (kind: string): boolean => SELECT_SYNTAX.has(kind);
