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
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const DOT = 46;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isDigit = (c: number) => c >= DIGIT_0 && c <= DIGIT_9;

/** What one pass over JSON text finds: how deep it nests, and whether a number may not survive a double. */
export interface JsonScan {
  /** It nests objects and arrays deeper than the depth asked about. */
  tooDeep: boolean;
  /** A number has a run of 16 digits (a dot may sit among them) or a three-digit exponent. */
  longNumbers: boolean;
}

/**
 * Scans JSON text once, strings aside: the nesting check a body needs before it is parsed, and
 * the number check that decides the slower exact parse (a regular expression for the latter
 * backtracked on every digit: a seventh of a batch's time).
 */
export function scanJson(text: string, maxDepth: number): JsonScan {
  let depth = 0;
  let run = 0;
  let longNumbers = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      if (++run >= 16) longNumbers = true;
      continue;
    }
    if (c === DOT && run > 0) continue;
    run = 0;
    if (c === QUOTE) {
      // To the string's closing quote; a backslash escapes the next character.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { tooDeep: true, longNumbers };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if ((c === 101 || c === 69) && !longNumbers) {
      let j = i + 1;
      const sign = text.charCodeAt(j);
      if (sign === 43 || sign === 45) j++;
      if (isDigit(text.charCodeAt(j)) && isDigit(text.charCodeAt(j + 1)) && isDigit(text.charCodeAt(j + 2))) longNumbers = true;
    }
  }
  return { tooDeep: false, longNumbers };
}

function keepSource(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && context?.source !== undefined && String(value) !== context.source ? rawJSON(context.source) : value;
}

/** JSON.parse, exact for every number; `longNumbers` from `scanJson` when the text was scanned already. */
export function parseJsonLossless(text: string, longNumbers = scanJson(text, Infinity).longNumbers): unknown {
  return longNumbers ? JSON.parse(text, keepSource) : JSON.parse(text);
}
