import { t, type TSchema } from 'elysia';

/** The largest page any listing returns; a larger `limit` is clamped to it. */
export const MAX_LIMIT = 1000;

const Count = (what: string) => t.String({ pattern: '^[0-9]{1,15}$', error: `must be a whole number (${what})` });

/** `limit` and `offset` query parameters, as every listing takes them. */
export const PageParams = {
  limit: t.Optional(Count(`at most ${MAX_LIMIT} are returned`)),
  offset: t.Optional(Count('0 or more')),
};

/** The paginated wrapper of the interface: `{ results, limit, offset, total }`. */
export const Page = <T extends TSchema>(item: T) =>
  t.Object({ results: t.Array(item), limit: t.Number(), offset: t.Number(), total: t.Number() });

/** The page a validated `limit`/`offset` pair asks for, with the limit clamped. */
export function pageWindow(query: { limit?: string; offset?: string }): { limit: number; offset: number } {
  return { limit: Math.min(Number(query.limit ?? MAX_LIMIT), MAX_LIMIT), offset: Number(query.offset ?? 0) };
}

/** One page of an in-memory list, in the paginated wrapper. */
export function pageOf<T>(items: readonly T[], query: { limit?: string; offset?: string }) {
  const { limit, offset } = pageWindow(query);
  return { results: items.slice(offset, offset + limit), limit, offset, total: items.length };
}
