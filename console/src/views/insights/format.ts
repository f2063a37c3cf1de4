/** How the insights' numbers, periods and durations read. */

const exact = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
export const formatNumber = (n: number) => exact.format(n);
export const formatPercent = (fraction: number) => `${(fraction * 100).toFixed(fraction === 0 || fraction === 1 ? 0 : 1)}%`;

/** Seconds as a person reads them: `45 s`, `17 min`, `3.2 h`, `2.1 days`. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

/** A small square of a series' colour (set through the DOM: the page's CSP allows no inline style attribute). */
export function swatch(colour: string): HTMLElement {
  const el = document.createElement('span');
  el.className = 'swatch';
  el.setAttribute('aria-hidden', 'true');
  el.style.backgroundColor = colour;
  return el;
}
