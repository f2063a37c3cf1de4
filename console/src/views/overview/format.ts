import type { Metric } from './query';

/** How the overview's numbers read: `1.2k`, `2m 05s`, `41%`, a country by its name. */

const whole = new Intl.NumberFormat('en');

/** `950`, `1.2k`, `12k`, `3.4M`. */
export function compactNumber(n: number): string {
  const abs = Math.abs(n);
  const scaled = (d: number, unit: string) => {
    const v = n / d;
    return `${Math.abs(v) >= 100 ? Math.round(v) : Number(v.toFixed(1))}${unit}`;
  };
  if (abs < 1000) return whole.format(Math.round(n * 100) / 100);
  if (abs < 999_950) return scaled(1e3, 'k');
  if (abs < 999_950_000) return scaled(1e6, 'M');
  return scaled(1e9, 'B');
}

/** `45s`, `2m 05s`, `1h 02m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
}

export function metricValue(metric: Metric, value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  switch (metric) {
    case 'bounce_rate':
      return `${Math.round(value)}%`;
    case 'visit_duration':
      return duration(value);
    case 'views_per_visit':
      return (Math.round(value * 100) / 100).toFixed(2).replace(/\.?0+$/, '') || '0';
    default:
      return compactNumber(value);
  }
}

export const METRIC_LABELS: Record<Metric, string> = {
  visitors: 'Unique visitors',
  visits: 'Total visits',
  pageviews: 'Total pageviews',
  views_per_visit: 'Views per visit',
  bounce_rate: 'Bounce rate',
  visit_duration: 'Visit duration',
};

let regions: Intl.DisplayNames | undefined;
/** `Germany` for `DE`; the code itself when the browser has no name for it. */
export function countryName(code: string): string {
  try {
    regions ??= new Intl.DisplayNames(['en'], { type: 'region' });
    return (/^[A-Za-z]{2}$/.test(code) && regions.of(code.toUpperCase())) || code;
  } catch {
    return code;
  }
}
