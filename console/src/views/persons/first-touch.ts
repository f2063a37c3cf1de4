import { h } from '../../dom';
import { countryName } from '../overview/format';

/** The first-touch properties (CONTRACT.md section 13) as a person's page names them, in this order. */
const LABELS: ReadonlyArray<readonly [string, string]> = [
  ['$initial_source', 'Source'],
  ['$initial_referring_domain', 'Referring domain'],
  ['$initial_referrer', 'Referrer'],
  ['$initial_utm_source', 'UTM source'],
  ['$initial_utm_medium', 'UTM medium'],
  ['$initial_utm_campaign', 'UTM campaign'],
  ['$initial_pathname', 'Landing page'],
  ['$initial_country', 'Country'],
  ['$initial_browser', 'Browser'],
  ['$initial_os', 'OS'],
  ['$initial_device', 'Device'],
];

/** `Germany (DE)` for a country code, so the code stays findable. */
export const countryText = (code: string) => (code ? `${countryName(code)}${countryName(code) === code ? '' : ` (${code})`}` : '');

/** A person's first touch: where their first event came from, the empty properties left out. */
export function firstTouchList(touch: Record<string, string>): HTMLElement {
  const rows = LABELS.filter(([name]) => touch[name]);
  if (rows.length === 0) return h('p', { class: 'muted' }, 'Their first event carried no source, page or place.');
  return h(
    'dl',
    { class: 'kv first-touch' },
    ...rows.flatMap(([name, label]) => [h('dt', { title: name }, label), h('dd', { 'data-field': name }, name === '$initial_country' ? countryText(touch[name]!) : touch[name]!)]),
  );
}
