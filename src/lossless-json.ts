/**
 * JSON.parse that keeps every number exactly as written. JavaScript numbers are doubles, so a
 * 64-bit id beyond 2^53 or a decimal with more than 15 significant digits would be rounded; such
 * a number is kept as its source text (`JSON.rawJSON`, which JSON.stringify writes verbatim).
 */

const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/**
 * A double holds any decimal of up to 15 significant digits exactly. Without a run of 16 digits
 * (a dot may sit among them) no number can lose any, and the faster plain parse is exact.
 */
const MAY_LOSE_DIGITS = /(?:\d\.?){16}/;

function keepSource(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && context?.source !== undefined && String(value) !== context.source ? rawJSON(context.source) : value;
}

export function parseJsonLossless(text: string): unknown {
  return MAY_LOSE_DIGITS.test(text) ? JSON.parse(text, keepSource) : JSON.parse(text);
}
