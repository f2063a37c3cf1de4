import { sankey, sankeyLeft, sankeyLinkHorizontal } from 'd3-sankey';
import { h } from '../dom';
import { PALETTE } from './period-chart';

/**
 * A Sankey diagram of weighted edges between named nodes, laid out by d3-sankey and drawn as SVG
 * (no inline styles: colours are attributes, the rest is in styles.css). Redrawn when its box is
 * resized. Each node and link has a <title> with its value; the edges are listed in a table
 * below for keyboards and screen readers.
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
  /** Column of a node, for its colour (the step). */
  column?: (name: string) => number;
  format?: (value: number) => string;
  height?: number;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<Node | string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

interface NamedNode {
  name: string;
}

export function sankeyDiagram(edges: readonly SankeyEdge[], options: SankeyOptions): HTMLElement {
  const label = options.label ?? ((n: string) => n);
  const format = options.format ?? String;
  const column = options.column ?? (() => 0);
  const box = h('div', { class: 'sankey' });
  const names = [...new Set(edges.flatMap((e) => [e.source, e.target]))];

  const draw = (width: number) => {
    const height = options.height ?? Math.max(260, Math.min(640, names.length * 34));
    const layout = sankey<NamedNode, SankeyEdge>()
      .nodeId((n) => n.name)
      .nodeAlign(sankeyLeft)
      .nodeWidth(12)
      .nodePadding(18)
      .extent([
        [1, 8],
        [width - 1, height - 8],
      ]);
    const graph = layout({ nodes: names.map((name) => ({ name })), links: edges.map((e) => ({ ...e })) });
    const path = sankeyLinkHorizontal();
    const colour = (name: string) => PALETTE[column(name) % PALETTE.length]!;
    const links = graph.links.map((l) =>
      svg(
        'path',
        { class: 'sankey-link', d: path(l) ?? '', stroke: colour(l.source.name), 'stroke-width': Math.max(1, l.width), fill: 'none' },
        svg('title', {}, `${label(l.source.name)} → ${label(l.target.name)}: ${format(l.value as number)}`),
      ),
    );
    const nodes = graph.nodes.map((n) => {
      const right = n.x0 > width / 2;
      return svg(
        'g',
        { class: 'sankey-node', 'data-node': n.name },
        svg('rect', { x: n.x0, y: n.y0, width: n.x1 - n.x0, height: Math.max(1, n.y1 - n.y0), fill: colour(n.name) }, svg('title', {}, `${label(n.name)}: ${format(n.value)}`)),
        svg(
          'text',
          { x: right ? n.x0 - 6 : n.x1 + 6, y: (n.y0 + n.y1) / 2, dy: '0.35em', 'text-anchor': right ? 'end' : 'start', class: 'sankey-label' },
          label(n.name),
          svg('tspan', { class: 'sankey-value' }, ` ${format(n.value)}`),
        ),
      );
    });
    return svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': options.title }, svg('g', { class: 'sankey-links' }, ...links), svg('g', {}, ...nodes));
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
