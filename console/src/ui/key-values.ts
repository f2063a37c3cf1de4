import { h } from '../dom';
import { cellText } from './format';

/** An object as `key: value` pairs on one line (nested objects as compact JSON), for table cells. */
export function keyValueText(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return cellText(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${cellText(v)}`)
    .join(' · ');
}

/** An object as a two-column list of its keys and values (traits, properties). */
export function keyValueList(value: Record<string, unknown> | undefined, empty = 'None'): HTMLElement {
  const entries = Object.entries(value ?? {});
  if (entries.length === 0) return h('p', { class: 'muted' }, empty);
  return h('dl', { class: 'kv' }, ...entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, cellText(v))]));
}
