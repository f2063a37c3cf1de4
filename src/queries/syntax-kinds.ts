/**
 * The kinds of node a SELECT's tree may hold, as `EXPLAIN AST` names them. The guard knows where
 * each of these can name a table; a kind it does not know (new syntax of a later engine) is
 * refused rather than let through unjudged.
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
  'ColumnsApplyTransformer',
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
