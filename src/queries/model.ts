import { t } from 'elysia';

/** Longest statement accepted, in characters; ClickHouse's own parser stops at 256 KiB. */
export const MAX_STATEMENT_LENGTH = 100_000;

/** One SQL statement, as POST /queries and POST /queries/export take it. */
export const Statement = t.String({ maxLength: MAX_STATEMENT_LENGTH, error: `must be a SQL statement of at most ${MAX_STATEMENT_LENGTH} characters` });

export function createQueriesBody(maxStatements: number) {
  return t.Object(
    {
      queries: t.Array(
        Statement,
        {
          minItems: 1,
          maxItems: maxStatements,
          error: `must be an array of 1 to ${maxStatements} SQL statements`,
        },
      ),
    },
    {
      additionalProperties: false,
      examples: [{ queries: ["SELECT event, count() AS n FROM events WHERE JSONExtract(properties, 'plan', 'String') = 'pro' GROUP BY event"] }],
    },
  );
}

const Rows = t.Array(t.Record(t.String(), t.Unknown()), { description: 'Rows keyed by column name or alias' });

/** One entry per statement, in order: `{ results: [row...] }`. `limit` and `offset` are null. */
export const QueriesResult = t.Object({
  results: t.Array(t.Object({ results: Rows })),
  limit: t.Null(),
  offset: t.Null(),
  total: t.Number(),
});
export type QueriesResult = typeof QueriesResult.static;
