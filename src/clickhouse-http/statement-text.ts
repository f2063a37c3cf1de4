/**
 * A small lexer for the text of a statement, to find the parts of ClickHouse's protocol that sit
 * in it (the FORMAT clause, the introspection statements and tables) without reading a name
 * inside a string literal or a comment. It decides nothing about safety: whatever text comes of
 * it is judged by the SQL guard, like any statement.
 */

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol';

export interface Token {
  kind: TokenKind;
  /** The token as written (with its quotes). */
  text: string;
  start: number;
  end: number;
}

const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /[0-9][0-9A-Za-z_.]*(?:[eEpP][+-][0-9]+)?/y;
const SPACE = /\s+/y;

/** The end of a quoted run starting at `start` with `quote`: a backslash escapes, a doubled quote is one. */
function quotedEnd(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i++;
    }
  }
  return text.length;
}

/** The end of a comment starting at `start`, or -1 when none starts there (block comments nest, as in ClickHouse). */
function commentEnd(text: string, start: number): number {
  if (text.startsWith('--', start) || text.startsWith('#!', start) || text.startsWith('# ', start)) {
    const line = text.indexOf('\n', start);
    return line < 0 ? text.length : line + 1;
  }
  if (!text.startsWith('/*', start)) return -1;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text.startsWith('/*', i)) (depth++, i++);
    else if (text.startsWith('*/', i)) {
      i++;
      if (--depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** The end of a heredoc string (`$$...$$` or `$tag$...$tag$`) starting at `start`, or -1. */
function heredocEnd(text: string, start: number): number {
  const tag = /\$[A-Za-z0-9_]*\$/y;
  tag.lastIndex = start;
  const opening = tag.exec(text)?.[0];
  if (!opening) return -1;
  const closing = text.indexOf(opening, start + opening.length);
  return closing < 0 ? text.length : closing + opening.length;
}

function match(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : -1;
}

/** The tokens of `text`, comments and white space left out. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const skipped = Math.max(match(SPACE, text, i), commentEnd(text, i));
    if (skipped > i) {
      i = skipped;
      continue;
    }
    const c = text[i]!;
    let kind: TokenKind = 'symbol';
    let end = i + 1;
    if (c === "'") [kind, end] = ['string', quotedEnd(text, i, c)];
    else if (c === '`' || c === '"') [kind, end] = ['quoted', quotedEnd(text, i, c)];
    else if (c === '$' && heredocEnd(text, i) > 0) [kind, end] = ['string', heredocEnd(text, i)];
    else if (match(WORD, text, i) > 0) [kind, end] = ['word', match(WORD, text, i)];
    else if (match(NUMBER, text, i) > 0) [kind, end] = ['number', match(NUMBER, text, i)];
    tokens.push({ kind, text: text.slice(i, end), start: i, end });
    i = end;
  }
  return tokens;
}

/** A name as ClickHouse reads it: a word as it is, a back- or double-quoted one without its quotes. */
export function nameOf(token: Token | undefined): string | undefined {
  if (!token) return undefined;
  if (token.kind === 'word') return token.text;
  if (token.kind !== 'quoted') return undefined;
  return token.text.slice(1, -1).replace(/\\(.)/g, '$1').replaceAll(token.text[0]!.repeat(2), token.text[0]!);
}

export const isWord = (token: Token | undefined, word: string): boolean => token?.kind === 'word' && token.text.toUpperCase() === word;

/**
 * The statement without its FORMAT clause, and the format named there. ClickHouse takes
 * `FORMAT <name>` last, before a SETTINGS clause if any, outside parentheses; a word FORMAT
 * anywhere else (a column or alias of that name) is left where it is.
 */
export function splitFormat(text: string): { statement: string; format: string | undefined } {
  const tokens = tokenize(text);
  let end = tokens.length;
  while (end > 0 && tokens[end - 1]!.text === ';') end--;
  let depth = 0;
  for (let i = 0; i < end - 1; i++) {
    const token = tokens[i]!;
    if (token.text === '(') depth++;
    else if (token.text === ')') depth--;
    if (depth !== 0 || !isWord(token, 'FORMAT')) continue;
    const format = nameOf(tokens[i + 1]);
    const after = tokens[i + 2];
    if (format === undefined || !(i + 2 === end || isWord(after, 'SETTINGS'))) continue;
    return { statement: text.slice(0, token.start) + (after && i + 2 < end ? ` ${text.slice(after.start)}` : ''), format };
  }
  return { statement: text, format: undefined };
}
