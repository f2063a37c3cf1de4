/**
 * JSON.parse that keeps every number exactly as written. JavaScript numbers are doubles, so a
 * 64-bit id beyond 2^53 or a decimal with more than 15 significant digits would be rounded; such
 * a number is kept as its source text (`JSON.rawJSON`, which JSON.stringify writes verbatim).
 */

const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/**
 * A double holds any decimal of up to 15 significant digits exactly, and any exponent of up to
 * two digits without overflow (1e309 would become Infinity, then null) or underflow (1e-400, 0).
 * Without a run of 16 digits (a dot may sit among them) or a three-digit exponent no number can
 * change, and the faster plain parse is exact.
 */
const MAY_CHANGE_NUMBERS = /(?:\d\.?){16}|[eE][+-]?\d{3}/;

function keepSource(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && context?.source !== undefined && String(value) !== context.source ? rawJSON(context.source) : value;
}

export function parseJsonLossless(text: string): unknown {
  return MAY_CHANGE_NUMBERS.test(text) ? JSON.parse(text, keepSource) : JSON.parse(text);
}
