import { t } from 'elysia';

/** Where the interface is served on the service's own port. */
export const CLICKHOUSE_PATH = '/clickhouse';

/**
 * The URL parameters of ClickHouse's HTTP interface that this service reads itself. Every other
 * parameter is a setting (settings.ts) or, as `param_<name>`, the value of a `{name:Type}`
 * parameter of the statement.
 */
export const ClickHouseQueryString = t.Object(
  {
    query: t.Optional(t.String({ description: 'The statement, or its beginning when the body holds the rest.' })),
    database: t.Optional(t.String({ description: "The workspace's database, or `default`." })),
    default_format: t.Optional(t.String({ description: 'The output format when the statement names none (TabSeparated).' })),
    query_id: t.Optional(t.String({ description: 'Echoed in X-ClickHouse-Query-Id; made up when absent.' })),
    user: t.Optional(t.String({ description: 'Ignored: the key names the workspace.' })),
    password: t.Optional(t.String({ description: "A workspace's private key, for clients that cannot send it in a header." })),
    enable_http_compression: t.Optional(t.String({ description: '1: compress the answer with an encoding of Accept-Encoding.' })),
  },
  { additionalProperties: true },
);
