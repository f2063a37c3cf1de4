import type { RegExpEngine } from 'ajv/dist/types';

/**
 * Whether `pattern` repeats something that itself repeats (`(a+)+`, `(\w*x)*`, `(a|ab){2,}`...):
 * the shape that makes a backtracking engine take exponential time on a crafted value. A plan's
 * patterns run on the ingest path of a process every workspace shares, on values any sender
 * chooses, so such patterns are refused when the plan is set. Escapes and character classes are
 * read as such; a lookaround counts as a group.
 */
export function repeatsRepetition(pattern: string): boolean {
  // For each open group: whether something inside it repeats.
  const open: boolean[] = [];
  let innerRepeats = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      continue;
    }
    if (c === '(') {
      open.push(false);
      continue;
    }
    const quantifier = c === '*' || c === '+' || (c === '{' && /^\{\d+,\d*\}/.test(pattern.slice(i)) && !/^\{(\d+),\1\}/.test(pattern.slice(i)));
    if (c === ')') {
      innerRepeats = open.pop() ?? false;
      const next = pattern.slice(i + 1);
      if (innerRepeats && (/^[*+]/.test(next) || (/^\{\d+,\d*\}/.test(next) && !/^\{(\d+),\1\}/.test(next)))) return true;
      // The group's own repetition counts for the group around it.
      if (innerRepeats && open.length > 0) open[open.length - 1] = true;
      continue;
    }
    if (quantifier && open.length > 0) open[open.length - 1] = true;
  }
  return false;
}

/** Ajv's engine for `pattern`: JavaScript's RegExp, refusing patterns that repeat a repetition. */
export const safeRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    if (repeatsRepetition(pattern)) throw new Error(`the pattern ${JSON.stringify(pattern)} repeats a repetition (such as (a+)+), which can take exponential time on a crafted value`);
    return new RegExp(pattern, flags);
  },
  { code: 'new RegExp' },
);
