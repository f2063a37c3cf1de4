import { sankey, sankeyLinkHorizontal } from 'd3-sankey';
import { h } from '../dom';
import { PALETTE } from './period-chart';
import './sankey.css';

/**
 * A Sankey diagram of weighted edges between named nodes, laid out by d3-sankey and drawn as SVG
 * (no inline styles: colours are attributes, the rest is in styles.css). Redrawn when its box is
 * resized. Each node and link has a <title> with its value; the edges are listed in a table
 * below for keyboards and screen readers.
 *
 * A node is drawn in the column its caller gives (a path's step), never where d3 would put it by
 * its depth: a node whose incoming edges were cut off is not an entry point. Each column is a
 * share of the width, its node at the left and its labels in the rest, so labels of two columns
 * never meet; a label too long for its column is cut (the whole is in its <title>) and a node too
 * thin for a line of text has none (its value is in its title and the table).
 */
export interface SankeyEdge {
  source: string;
  target: string;
  value: number;
}

export interface SankeyOptions {
  title: string;
  /** A node's text (its name without the step prefix, say). */
  label?: (name: string) => string;
  /** A node's column, from 0 (a path's step less one): where it is drawn, and its colour. */
  column: (name: string) => number;
  /** The heading of a column ("Step 1"). */
  columnLabel?: (column: number) => string;
  format?: (value: number) => string;
  height?: number;
  /** Tighter spacing, for a dashboard tile. */
  compact?: boolean;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<Node | string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

interface ColumnNode {
  name: string;
  column: number;
  /** An invisible node of no value that makes d3 lay out every column (below). */
  spacer?: true;
}

const NODE_WIDTH = 12;
/** Below this height (px) a node's label would run into its neighbours': it has none. */
const LABEL_MIN_HEIGHT = 13;
/** Width of a label's character, about, at 12px (labels are cut to fit their column). */
const CHAR_WIDTH = 6.6;
const HEADING_HEIGHT = 22;
/** The narrowest column (px), of a node and a label of about 15 characters (11 on a tile). */
const MIN_COLUMN = 120;
const MIN_COLUMN_COMPACT = 96;

/** `text` cut to `chars` characters at most, with an ellipsis when cut. */
export function clip(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return chars <= 1 ? '…' : `${text.slice(0, chars - 1)}…`;
}

export function sankeyDiagram(edges: readonly SankeyEdge[], options: SankeyOptions): HTMLElement {
  const label = options.label ?? ((n: string) => n);
  const format = options.format ?? String;
  const box = h('div', { class: `sankey${options.compact ? ' compact' : ''}` });
  const names = [...new Set(edges.flatMap((e) => [e.source, e.target]))];
  const columns = Math.max(1, ...names.map((n) => options.column(n) + 1));
  // d3-sankey makes as many columns as its longest chain of links is long, and clamps a node's
  // column to those: a chain of spacers (no value, not drawn) as long as the columns makes them all.
  const spacers: ColumnNode[] = Array.from({ length: columns }, (_, k) => ({ name: `\u0000spacer ${k}`, column: k, spacer: true }));
  const spacerLinks = spacers.slice(1).map((s, k) => ({ source: spacers[k]!.name, target: s.name, value: 0 }));

  const draw = (boxWidth: number) => {
    // Narrower columns than this leave labels of a few letters: the diagram scrolls sideways instead.
    const width = Math.max(boxWidth, columns * (options.compact ? MIN_COLUMN_COMPACT : MIN_COLUMN));
    const height = options.height ?? Math.max(280, Math.min(640, names.length * 34));
    // Each column is width / columns wide: its nodes at its left, their labels in the rest.
    const share = width / columns;
    const top = options.columnLabel ? HEADING_HEIGHT : 4;
    const layout = sankey<ColumnNode, SankeyEdge>()
      .nodeId((n) => n.name)
      .nodeAlign((n) => n.column)
      .nodeWidth(NODE_WIDTH)
      .nodePadding(options.compact ? 10 : 18)
      .extent([
        [1, top],
        [Math.max(NODE_WIDTH + 2, width - share + NODE_WIDTH), height - 4],
      ]);
    const nodes = [...names.map((name) => ({ name, column: options.column(name) })), ...spacers];
    const graph = layout({ nodes, links: [...edges.map((e) => ({ ...e })), ...spacerLinks] });
    const path = sankeyLinkHorizontal();
    const colour = (column: number) => PALETTE[column % PALETTE.length]!;
    const chars = Math.max(1, Math.floor((share - NODE_WIDTH - 10) / CHAR_WIDTH));
    const links = graph.links
      .filter((l) => !l.source.spacer)
      .map((l) =>
        svg(
          'path',
          { class: 'sankey-link', d: path(l) ?? '', stroke: colour(l.source.column), 'stroke-width': Math.max(1, l.width), fill: 'none' },
          svg('title', {}, `${label(l.source.name)} → ${label(l.target.name)}: ${format(l.value as number)}`),
        ),
      );
    const drawn = graph.nodes
      .filter((n) => !n.spacer)
      .map((n) => {
        const tall = n.y1 - n.y0 >= LABEL_MIN_HEIGHT;
        const name = clip(label(n.name), Math.max(1, chars - format(n.value).length - 1));
        return svg(
          'g',
          { class: 'sankey-node', 'data-node': n.name },
          // The whole name and value, for the node and its label (which may be cut or left out).
          svg('title', {}, `${label(n.name)}: ${format(n.value)}`),
          svg('rect', { x: n.x0, y: n.y0, width: n.x1 - n.x0, height: Math.max(1, n.y1 - n.y0), fill: colour(n.column) }),
          ...(tall ? [svg('text', { x: n.x1 + 5, y: (n.y0 + n.y1) / 2, dy: '0.35em', class: 'sankey-label' }, name, svg('tspan', { class: 'sankey-value' }, ` ${format(n.value)}`))] : []),
        );
      });
    const x0 = graph.nodes.filter((n) => n.spacer).map((n) => n.x0);
    const headings = options.columnLabel ? x0.map((x, k) => svg('text', { x, y: 14, class: 'sankey-column', 'data-column': k }, options.columnLabel!(k))) : [];
    return svg(
      'svg',
      { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': options.title },
      svg('g', {}, ...headings),
      svg('g', { class: 'sankey-links' }, ...links),
      svg('g', {}, ...drawn),
    );
  };

  let drawnWidth = 0;
  const observer = new ResizeObserver(([entry]) => {
    if (!box.isConnected) return observer.disconnect();
    const width = Math.floor(entry!.contentRect.width);
    if (width === 0 || width === drawnWidth) return;
    drawnWidth = width;
    box.replaceChildren(draw(width));
  });
  observer.observe(box);
  return box;
}
