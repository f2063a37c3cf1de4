import { Type, type TLiteral } from '@sinclair/typebox';
import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';
import { Problem } from '../http/problem';
import { TimeFields } from '../insights/model';
import { INSIGHT_KINDS } from '../insights/kinds';

/** Saved insights of one workspace at most. */
export const MAX_SAVED_INSIGHTS = 1000;
/** Dashboards of one workspace at most. */
export const MAX_DASHBOARDS = 200;
/** Tiles of one dashboard at most: each is a statement when the dashboard is answered. */
export const MAX_TILES = 50;
/** Columns of a dashboard's grid. */
export const GRID_COLUMNS = 12;
/** Rows down a dashboard's grid a tile may start at, and rows one tile may span. */
export const GRID_ROWS = 1000;
export const MAX_TILE_HEIGHT = 50;
/** A saved insight's `display`, as JSON, at most (settings of a chart, not data). */
export const MAX_DISPLAY_BYTES = 16 * 1024;

export const SAVED_KINDS = [...INSIGHT_KINDS, 'sql'] as const;
export type SavedKind = (typeof SAVED_KINDS)[number];
// A union of literals: Elysia fills a missing required t.UnionEnum with its first value. (Typed
// as a one-element tuple: Elysia's types make an array of literals `never`.)
const Kind = (options: { error?: string; description?: string } = {}) => Type.Union(SAVED_KINDS.map((kind) => Type.Literal(kind)) as [TLiteral<SavedKind>], options);

const Name = t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be a non-blank string of at most 200 characters' });
// TypeBox's own Integer: Elysia's t.Integer would also take numeric strings such as "3".
const WholeNumber = (minimum: number, maximum: number, description: string) =>
  Type.Integer({ minimum, maximum, description, error: `must be a whole number from ${minimum} to ${maximum}` });

const Display = t.Record(t.String(), t.Unknown(), {
  error: 'must be a JSON object',
  description: `Free-form settings for the console (chart type, colours, ...), stored as given; at most ${MAX_DISPLAY_BYTES} bytes of JSON.`,
});

export const SavedInsightInput = t.Object(
  {
    name: Name,
    kind: Kind({ error: `must be one of ${SAVED_KINDS.join(', ')}` }),
    query: t.Unknown({
      description: 'For an insight kind, the request body of `POST /insights/<kind>` (checked against it); for `sql`, one statement as `POST /queries` takes it.',
    }),
    display: t.Optional(Display),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Weekly signups', kind: 'trends', query: { series: [{ event: 'signup', math: 'persons' }], dateFrom: '-8w', interval: 'week' }, display: { chart: 'bar' } },
      { name: 'Top events', kind: 'sql', query: 'SELECT event, count() AS n FROM events GROUP BY event ORDER BY n DESC LIMIT 10' },
    ],
  },
);
export type SavedInsightInput = typeof SavedInsightInput.static;

export const SavedInsight = t.Object({
  id: t.String(),
  name: t.String(),
  kind: Kind(),
  query: t.Unknown(),
  display: t.Optional(t.Record(t.String(), t.Unknown())),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
});
export type SavedInsight = typeof SavedInsight.static;

export const Tile = t.Object(
  {
    insightId: t.String({ minLength: 1, maxLength: 100, description: 'A saved insight of the same workspace.' }),
    x: WholeNumber(0, GRID_COLUMNS - 1, `Column of the tile's left edge, from 0 (of ${GRID_COLUMNS}).`),
    y: WholeNumber(0, GRID_ROWS - 1, "Row of the tile's top edge, from 0."),
    w: WholeNumber(1, GRID_COLUMNS, `Columns wide; x + w at most ${GRID_COLUMNS}.`),
    h: WholeNumber(1, MAX_TILE_HEIGHT, 'Rows high.'),
  },
  { additionalProperties: false },
);
export type Tile = typeof Tile.static;

export const DashboardInput = t.Object(
  {
    name: Name,
    tiles: t.Array(Tile, { maxItems: MAX_TILES, error: `must be a list of at most ${MAX_TILES} tiles` }),
    refreshSeconds: t.Optional(WholeNumber(30, 86_400, 'How often the console refreshes the dashboard, in seconds.')),
    dateFrom: t.Optional({ ...TimeFields.dateFrom, description: "When set, the range of every tile whose kind takes one, in place of the tile's own: ISO 8601 or relative (-30d)." }),
    dateTo: t.Optional({ ...TimeFields.dateTo, description: 'The end of that range (only with dateFrom); unset, now.' }),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Growth', tiles: [{ insightId: '6f1c…', x: 0, y: 0, w: 6, h: 4 }], refreshSeconds: 300, dateFrom: '-30d' }],
  },
);
export type DashboardInput = typeof DashboardInput.static;

export const Dashboard = t.Composite([
  t.Object({ id: t.String() }),
  t.Omit(DashboardInput, ['tiles']),
  t.Object({ tiles: t.Array(Tile), createdAt: t.String({ format: 'date-time' }), updatedAt: t.String({ format: 'date-time' }) }),
]);
export type Dashboard = typeof Dashboard.static;

/** One tile's answer: its insight's answer, or the problem that kept it from one. */
export const TileResult = t.Object({
  insightId: t.String(),
  kind: t.Optional(Kind({ description: 'Absent when the saved insight is gone.' })),
  result: t.Optional(t.Unknown({ description: 'The answer of `POST /insights/<kind>`, or for sql `{ results: [row...] }` as one statement of `POST /queries`.' })),
  error: t.Optional({ ...Problem, description: 'Why this tile has no answer (the others are not affected).' }),
  computedAt: t.Optional(t.String({ format: 'date-time', description: 'When the answer was asked: it holds the events loaded before then. Absent with an error.' })),
  stale: t.Optional(t.Boolean({ description: 'Only with `?stale=true`: the answer was kept from an earlier call and events arrived since (or it is older than the current answers kept); ask without `stale` for the current one.' })),
});
export type TileResult = typeof TileResult.static;

export const DashboardResults = t.Object({ results: t.Array(TileResult, { description: 'One per tile, in the order of `tiles`.' }) });
export type DashboardResults = typeof DashboardResults.static;

export const SavedInsightsPage = Page(SavedInsight);
export const DashboardsPage = Page(Dashboard);
export const ListQuery = t.Object(PageParams, { additionalProperties: false });
export const IdParams = t.Object({ id: t.String() });
export const ResultsQuery = t.Object(
  {
    stale: t.Optional(
      t.Union([t.Literal('true'), t.Literal('false')], {
        error: 'must be true or false',
        description: "`true`: each tile answers its last answer at once, even if events arrived since (marked `stale`), so a dashboard is drawn before its current answers are computed; a tile with none kept is answered now.",
      }),
    ),
  },
  { additionalProperties: false },
);
