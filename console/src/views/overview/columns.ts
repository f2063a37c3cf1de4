import { compactNumber } from './format';
import type { Dimension } from './filters';

/** A number of a panel's rows: a Stats API metric and its heading. */
export interface PanelColumn {
  metric: string;
  label: string;
}

/** A number as a row shows it; a conversion rate (a percentage already) with its sign. */
export const columnValue = (column: PanelColumn, value: number) => (column.metric === 'conversion_rate' ? `${Math.round(value * 10) / 10}%` : compactNumber(value));

/** What a panel asks for: a page of a dimension's rows, optionally only those containing a text. */
export interface PanelRequest {
  dimension: Dimension;
  metrics: string[];
  limit: number;
  offset?: number;
  search?: string;
  totalRows?: boolean;
}
