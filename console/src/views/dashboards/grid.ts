import { GridStack, type GridItemHTMLElement } from 'gridstack';
import 'gridstack/dist/gridstack.min.css';
import type { Tile } from '../../types';
import { GRID_COLUMNS } from './common';

/** Height of one grid row in pixels: a tile of the default 4 rows is about 300 pixels high. */
const CELL_HEIGHT = 76;
/** Below this width (of the grid) the tiles stack in one column, in order, and stay put. */
const ONE_COLUMN_BELOW = 700;
/** Rows a tile may span at most, and rows down a tile may start (docs/api/dashboards.md). */
const MAX_TILE_HEIGHT = 50;
const MAX_ROW = 999;

export interface DashboardGrid {
  /** Every tile's element, in the order of the tiles. */
  items: HTMLElement[];
  /** Moves or resizes a tile from the keyboard; the layout change is reported as a drag's is. */
  nudge(index: number, dx: number, dy: number, dw: number, dh: number): void;
  destroy(): void;
}

/**
 * The tiles on a 12-column grid with gridstack: dragged by their header, resized from their
 * corner. `onLayout` receives the tiles with their new places after a move made by hand, never
 * for the one-column layout of a narrow screen (which would overwrite the 12-column one).
 */
export function dashboardGrid(host: HTMLElement, tiles: readonly Tile[], content: (tile: Tile, index: number) => HTMLElement, onLayout: (tiles: Tile[]) => void): DashboardGrid {
  host.classList.add('grid-stack');
  const items = tiles.map((tile, index) => {
    const item = document.createElement('div');
    item.className = 'grid-stack-item';
    item.dataset.index = String(index);
    // Its place as gridstack reads it from the element.
    for (const [name, value] of Object.entries({ x: tile.x, y: tile.y, w: tile.w, h: tile.h, 'max-h': MAX_TILE_HEIGHT })) item.setAttribute(`gs-${name}`, String(value));
    const inner = content(tile, index);
    inner.classList.add('grid-stack-item-content');
    item.append(inner);
    host.append(item);
    return item;
  });
  const grid = GridStack.init(
    {
      column: GRID_COLUMNS,
      cellHeight: CELL_HEIGHT,
      margin: 6,
      mode: 'float',
      animate: false,
      handle: '.tile-header',
      resizable: { handles: 'se' },
      maxRow: MAX_ROW + MAX_TILE_HEIGHT,
      columnOpts: { breakpoints: [{ w: ONE_COLUMN_BELOW, c: 1 }], layout: 'list' },
    },
    host,
  )!;

  const wide = () => grid.getColumn() === GRID_COLUMNS;
  const place = (t: Tile): Tile => ({ insightId: t.insightId, x: t.x, y: t.y, w: t.w, h: t.h });
  const layout = (): Tile[] =>
    tiles.map((tile, i) => {
      const node = (items[i] as GridItemHTMLElement).gridstackNode;
      return place(node ? { ...tile, x: node.x ?? tile.x, y: node.y ?? tile.y, w: node.w ?? tile.w, h: node.h ?? tile.h } : tile);
    });
  // The layout as stored (not as first drawn: a phone draws one column).
  let reported = JSON.stringify(tiles.map(place));
  const report = () => {
    if (!wide()) return;
    const now = layout();
    const text = JSON.stringify(now);
    if (text === reported) return;
    reported = text;
    onLayout(now);
  };
  // Only the user's moves are saved: gridstack's 'change' also tells of what it does by itself (the
  // twelve columns back after one, overlapping tiles drawn apart), which a reload must not save.
  // A drag's stop comes with every tile in its final place, those it pushed too.
  grid.on('dragstop resizestop', report);
  // One column on a phone: nothing to arrange, and a touch should scroll the page.
  const fit = () => grid.setStatic(!wide());
  const observer = new ResizeObserver(fit);
  observer.observe(host);
  fit();
  return {
    items,
    nudge(index, dx, dy, dw, dh) {
      const node = (items[index] as GridItemHTMLElement | undefined)?.gridstackNode;
      if (!node || !wide()) return;
      const w = Math.min(GRID_COLUMNS, Math.max(1, (node.w ?? 1) + dw));
      const h = Math.min(MAX_TILE_HEIGHT, Math.max(1, (node.h ?? 1) + dh));
      const x = Math.min(GRID_COLUMNS - w, Math.max(0, (node.x ?? 0) + dx));
      const y = Math.min(MAX_ROW, Math.max(0, (node.y ?? 0) + dy));
      grid.update(items[index]!, { x, y, w, h });
      report();
    },
    destroy() {
      observer.disconnect();
      // Not gridstack's removal of the DOM, which takes the host with the tiles: the host stays.
      grid.destroy(false);
      host.replaceChildren();
    },
  };
}
