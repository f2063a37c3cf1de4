import type { Row } from '../types';
import { cellText } from './format';

/** Saves `text` as a file through a temporary link to a Blob (nothing leaves the browser). */
export function download(filename: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** RFC 4180 CSV: every field quoted when it holds a comma, quote or line break. */
export function toCsv(columns: readonly string[], rows: readonly Row[]): string {
  const field = (value: unknown) => {
    const text = cellText(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [columns.map(field).join(','), ...rows.map((row) => columns.map((c) => field(row[c])).join(','))].join('\r\n') + '\r\n';
}
