import { h } from '../dom';
import type { Row } from '../types';
import { cellText } from './format';

/** Rows measured to size the columns: enough to be typical, few enough to be quick. */
const SAMPLE_ROWS = 200;
/** Column widths in pixels: about one monospace character each, within bounds. */
const CHAR_PX = 7.6;
const MIN_COLUMN_PX = 90;
const MAX_COLUMN_PX = 420;
const CELL_PADDING_PX = 26;

/**
 * Each row is a grid of its own (only visible rows exist), so columns get fixed widths, measured
 * from the header and a sample of the values, for every row to line up with the header.
 */
function columnWidths(options: TableOptions): number[] {
  const sample = options.rows.slice(0, SAMPLE_ROWS);
  return options.columns.map((c) => {
    let chars = c.length + 2; // the header is in a wider, bold face
    for (const row of sample) chars = Math.max(chars, (options.format ? options.format(c, row[c]) : cellText(row[c])).length);
    return Math.round(Math.min(MAX_COLUMN_PX, Math.max(MIN_COLUMN_PX, chars * CHAR_PX + CELL_PADDING_PX)));
  });
}

/** A number, or the text of one as ClickHouse's JSON writes 64-bit integers and decimals. */
const NUMERIC = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;
const isNumeric = (v: unknown) => typeof v === 'number' || (typeof v === 'string' && NUMERIC.test(v));

/** Columns whose sampled values are all numbers (nulls aside): drawn right-aligned, digits under digits. */
function numericColumns(options: TableOptions): Set<string> {
  const sample = options.rows.slice(0, SAMPLE_ROWS);
  return new Set(options.columns.filter((c) => sample.some((r) => r[c] !== null && r[c] !== undefined) && sample.every((r) => r[c] === null || r[c] === undefined || isNumeric(r[c]))));
}

/** A cell: its text, or a blank value (empty text, null) said visibly, muted, as nothing looks like a bug. */
function cell(text: string, value: unknown, numeric: boolean): HTMLElement {
  const blank = text === '' ? (value === null || value === undefined ? 'null' : '(empty)') : undefined;
  return h('div', { class: `vt-cell${numeric ? ' vt-num' : ''}${blank ? ' vt-blank' : ''}`, role: 'gridcell', title: text.length > 40 ? text.slice(0, 500) : null }, blank ?? text);
}

/** Height of one row in pixels; the CSS gives `.vt-row` the same. */
const ROW_HEIGHT = 30;
/** Rows drawn beyond the visible ones, so fast scrolling shows no gaps. */
const OVERSCAN = 10;

export interface TableOptions {
  columns: readonly string[];
  rows: readonly Row[];
  /** Called with the row clicked or chosen with Enter. */
  onOpen?: (row: Row, index: number) => void;
  /** A cell's text, when it is not the value's own (times, say). */
  format?: (column: string, value: unknown) => string;
}

/**
 * A table that draws only the rows in view (results run to 100,000 rows), with a sticky header.
 * Rows are buttons to the keyboard: Tab reaches the table, arrows move, Enter opens.
 */
export function virtualTable(options: TableOptions): HTMLElement {
  const { columns, rows } = options;
  const template = columnWidths(options).map((w) => `${w}px`).join(' ');
  const numeric = numericColumns(options);
  const header = h('div', { class: 'vt-row vt-header', role: 'row' }, ...columns.map((c) => h('div', { class: `vt-cell${numeric.has(c) ? ' vt-num' : ''}`, role: 'columnheader', title: c }, c)));
  const body = h('div', { class: 'vt-body', role: 'rowgroup' });
  const viewport = h('div', { class: 'vt', role: 'grid', tabindex: 0, 'aria-rowcount': rows.length }, header, body);
  header.style.gridTemplateColumns = template;
  body.style.height = `${rows.length * ROW_HEIGHT}px`;
  let focused = -1;

  const draw = () => {
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW_HEIGHT) + OVERSCAN);
    body.replaceChildren();
    for (let i = first; i < last; i++) {
      const row = rows[i]!;
      const el = h(
        'div',
        { class: `vt-row${i === focused ? ' vt-focused' : ''}${options.onOpen ? ' vt-clickable' : ''}`, role: 'row', 'aria-rowindex': i + 1 },
        ...columns.map((c) => cell(options.format ? options.format(c, row[c]) : cellText(row[c]), row[c], numeric.has(c))),
      );
      el.style.gridTemplateColumns = template;
      el.style.top = `${i * ROW_HEIGHT}px`;
      if (options.onOpen) el.addEventListener('click', () => options.onOpen!(row, i));
      body.append(el);
    }
  };
  viewport.addEventListener('scroll', draw, { passive: true });
  viewport.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      focused = Math.max(0, Math.min(rows.length - 1, focused + (e.key === 'ArrowDown' ? 1 : -1)));
      const top = focused * ROW_HEIGHT;
      if (top < viewport.scrollTop + ROW_HEIGHT) viewport.scrollTop = top - ROW_HEIGHT;
      else if (top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = top + 2 * ROW_HEIGHT - viewport.clientHeight;
      draw();
    } else if (e.key === 'Enter' && focused >= 0 && options.onOpen) options.onOpen(rows[focused]!, focused);
  });
  // Drawn once it is in the page and has a height.
  new ResizeObserver(draw).observe(viewport);
  return viewport;
}
