/** The part of d3-sankey (0.12) the console uses; the package ships no types of its own. */
declare module 'd3-sankey' {
  export interface SankeyNodeLayout<L> {
    x0: number;
    x1: number;
    y0: number;
    y1: number;
    value: number;
    depth: number;
    height: number;
    layer: number;
    index: number;
    sourceLinks: L[];
    targetLinks: L[];
  }
  export interface SankeyLinkLayout<N> {
    source: N;
    target: N;
    width: number;
    y0: number;
    y1: number;
    index: number;
  }
  export type LaidNode<N, L> = N & SankeyNodeLayout<LaidLink<N, L>>;
  export type LaidLink<N, L> = Omit<L, 'source' | 'target'> & SankeyLinkLayout<LaidNode<N, L>>;
  export interface SankeyLayout<N, L> {
    (graph: { nodes: N[]; links: L[] }): { nodes: Array<LaidNode<N, L>>; links: Array<LaidLink<N, L>> };
    nodeId(id: (node: N) => string | number): this;
    nodeWidth(width: number): this;
    nodePadding(padding: number): this;
    nodeAlign(align: (node: LaidNode<N, L>, n: number) => number): this;
    nodeSort(sort: ((a: LaidNode<N, L>, b: LaidNode<N, L>) => number) | null | undefined): this;
    linkSort(sort: ((a: LaidLink<N, L>, b: LaidLink<N, L>) => number) | null | undefined): this;
    extent(extent: [[number, number], [number, number]]): this;
    iterations(iterations: number): this;
  }
  export function sankey<N, L>(): SankeyLayout<N, L>;
  export function sankeyLinkHorizontal(): (link: SankeyLinkLayout<SankeyNodeLayout<unknown>>) => string | null;
  export function sankeyLeft(node: SankeyNodeLayout<unknown>, n: number): number;
  export function sankeyRight(node: SankeyNodeLayout<unknown>, n: number): number;
  export function sankeyCenter(node: SankeyNodeLayout<unknown>, n: number): number;
  export function sankeyJustify(node: SankeyNodeLayout<unknown>, n: number): number;
}
