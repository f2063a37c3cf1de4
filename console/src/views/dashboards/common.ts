import { api } from '../../api';
import type { Dashboard, Page, SavedInsight, SavedKind, Tile } from '../../types';
import { hashOf } from '../../ui/hash';

/** Columns of a dashboard's grid (docs/api/dashboards.md). */
export const GRID_COLUMNS = 12;
/** A new tile's size: half the width, four rows. */
export const NEW_TILE = { w: 6, h: 4 } as const;
/** Saved insights and dashboards a workspace may have at most: one page reads them all. */
const ALL = 1000;

export const KIND_LABELS: Record<SavedKind, string> = {
  trends: 'Trends',
  funnels: 'Funnel',
  retention: 'Retention',
  paths: 'Paths',
  stickiness: 'Stickiness',
  lifecycle: 'Lifecycle',
  sql: 'SQL',
};

/**
 * Where a saved insight opens: its kind's insight builder (`#/insights/<kind>?saved=<id>`, the
 * Insights pages' own address), or the SQL page for a saved statement.
 */
export function insightHref(insight: Pick<SavedInsight, 'id' | 'kind'>): string {
  return insight.kind === 'sql' ? hashOf('sql', [], { saved: insight.id }) : hashOf('insights', [insight.kind], { saved: insight.id });
}

export const dashboardHref = (id: string) => hashOf('dashboards', [id]);

export async function listSaved(): Promise<SavedInsight[]> {
  return (await api<Page<SavedInsight>>('GET', `/insights/saved?limit=${ALL}`)).results;
}

export async function listDashboards(): Promise<Dashboard[]> {
  return (await api<Page<Dashboard>>('GET', `/dashboards?limit=${ALL}`)).results;
}

/** A PUT replaces every field: the body carries them all, the ones left alone included. */
export function dashboardInput(d: Pick<Dashboard, 'name' | 'tiles' | 'refreshSeconds' | 'dateFrom' | 'dateTo'>): Record<string, unknown> {
  const body: Record<string, unknown> = { name: d.name, tiles: d.tiles.map(({ insightId, x, y, w, h }) => ({ insightId, x, y, w, h })) };
  if (d.refreshSeconds) body.refreshSeconds = d.refreshSeconds;
  if (d.dateFrom) body.dateFrom = d.dateFrom;
  if (d.dateFrom && d.dateTo) body.dateTo = d.dateTo;
  return body;
}

export function saveDashboard(d: Dashboard): Promise<Dashboard> {
  return api<Dashboard>('PUT', `/dashboards/${d.id}`, dashboardInput(d));
}

export function savedInput(s: Pick<SavedInsight, 'name' | 'kind' | 'query' | 'display'>): Record<string, unknown> {
  return { name: s.name, kind: s.kind, query: s.query, ...(s.display ? { display: s.display } : {}) };
}

/**
 * A new tile for `insightId` in the first free place, row by row (so tiles added one after the
 * other fill the grid two a row), else below every tile there is.
 */
export function tileBelow(tiles: readonly Tile[], insightId: string): Tile {
  const bottom = tiles.reduce((low, t) => Math.max(low, t.y + t.h), 0);
  const free = (x: number, y: number) => tiles.every((t) => x + NEW_TILE.w <= t.x || t.x + t.w <= x || y + NEW_TILE.h <= t.y || t.y + t.h <= y);
  for (let y = 0; y < bottom; y++) for (let x = 0; x + NEW_TILE.w <= GRID_COLUMNS; x++) if (free(x, y)) return { insightId, x, y, ...NEW_TILE };
  return { insightId, x: 0, y: bottom, ...NEW_TILE };
}
