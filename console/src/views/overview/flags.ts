import { h } from '../../dom';

/**
 * Set by console/build.ts: the hash in the flags' file names, and the country codes that have a
 * flag (country-flag-icons' SVGs, copied beside the console's other files). Images, not emoji:
 * Debian's Chromium has no emoji font and Windows draws flag emoji as two letters.
 */
declare const FLAG_SET: string;
declare const FLAG_CODES: string;

const CODES = new Set(FLAG_CODES.split(' '));

/** The flag of an ISO 3166 alpha-2 code, as an image asked for only when shown; null for a code without one. */
export function flagImage(code: string): HTMLImageElement | null {
  const upper = code.toUpperCase();
  if (!CODES.has(upper)) return null;
  return h('img', { class: 'ov-flag', src: `/console/assets/flag-${FLAG_SET}-${upper}.svg`, alt: '', width: 18, height: 12, decoding: 'async' });
}
