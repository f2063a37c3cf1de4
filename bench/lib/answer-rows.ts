/** Rows of a Stats API answer, to compare the service's with a statement's of the same question. */
export interface AnswerRow {
  dimensions: string[];
  metrics: number[];
}

/** JSONEachRow lines whose first `dimensions` columns are the dimensions and the rest the metrics, in order. */
export function rowsOfLines(text: string, dimensions: number): AnswerRow[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const values = Object.values(JSON.parse(line) as Record<string, unknown>);
      return { dimensions: values.slice(0, dimensions).map(String), metrics: values.slice(dimensions).map(Number) };
    });
}

const same = (a: AnswerRow, b: AnswerRow) => JSON.stringify([a.dimensions, a.metrics]) === JSON.stringify([b.dimensions, b.metrics]);
const show = (row: AnswerRow | undefined) => (row ? `[${[...row.dimensions.map((d) => JSON.stringify(d)), ...row.metrics].join(', ')}]` : 'none');

/** Where two answers first differ ('' when they do not): the row's place and both rows. */
export function firstDifference(service: readonly AnswerRow[], anchor: readonly AnswerRow[]): string {
  const i = service.findIndex((row, k) => !anchor[k] || !same(row, anchor[k]!));
  if (i >= 0) return `row ${i + 1} of ${service.length}: service ${show(service[i])}, anchor ${show(anchor[i])}`;
  if (anchor.length > service.length) return `row ${service.length + 1}: service none, anchor ${show(anchor[service.length])} (${anchor.length} rows against ${service.length})`;
  return '';
}
