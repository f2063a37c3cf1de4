import type { Params } from '../storage/storage';
import { OBJECT_COLUMNS, READ_FUNCTIONS, signatureOf, unquoteLiteral, type JsonRead } from './json-read';

/**
 * The reads a statement's text makes by constant keys, found by a tokenizer (string literals,
 * quoted names and comments are skipped whole), and the text with some of them replaced by the
 * columns that store them. Only the shape of a call is read here; which table a call's column
 * belongs to is the analyzer's to tell (read-tree.ts).
 */

/** A read in a statement's text. */
export interface ReadCall {
  start: number;
  end: number;
  /** The column's qualifier as written, dot included (`e.`, `` `events`. ``), or ''. */
  qualifier: string;
  read: JsonRead;
  signature: string;
}

interface Token {
  kind: 'word' | 'quoted' | 'string' | 'number' | 'param' | 'punct';
  text: string;
  start: number;
  end: number;
}

const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /[0-9][0-9A-Za-z_.]*/y;
// A type holding quotes (`{p:Enum8('}' = 1)}`) is not read as a placeholder: its `}` could be
// inside a string, and the quotes are then read as the literals the engine sees.
const PARAM = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}'"`]+?)\s*\}/y;
const PARAM_PARTS = new RegExp(`^${PARAM.source}$`);
const INTEGER_TYPE = /^U?Int(?:8|16|32|64)$/;

/** Where the quoted text starting at `start` ends (after its closing quote), or -1 when it does not. */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start];
  for (let i = start + 1; i < sql.length; i++) {
    if (sql[i] === '\\') i++;
    else if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i++;
    }
  }
  return -1;
}

/** The statement's tokens; they stop where a quote or comment is left open. */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const take = (pattern: RegExp) => {
    pattern.lastIndex = i;
    return pattern.exec(sql);
  };
  while (i < sql.length) {
    const c = sql[i]!;
    let end: number;
    let kind: Token['kind'];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (sql.startsWith('--', i) || sql.startsWith('/*', i)) {
      const close = sql.startsWith('--', i) ? sql.indexOf('\n', i) : sql.indexOf('*/', i);
      if (close < 0) break;
      i = close + (sql[close] === '\n' ? 1 : 2);
      continue;
    }
    if (c === "'" || c === '`' || c === '"') {
      end = closingQuote(sql, i);
      if (end < 0) break;
      kind = c === "'" ? 'string' : 'quoted';
    } else if (c === '{' && take(PARAM)) {
      end = PARAM.lastIndex;
      kind = 'param';
    } else if (take(WORD)) {
      end = WORD.lastIndex;
      kind = 'word';
    } else if (take(NUMBER)) {
      end = NUMBER.lastIndex;
      kind = 'number';
    } else {
      end = i + 1;
      kind = 'punct';
    }
    tokens.push({ kind, text: sql.slice(i, end), start: i, end });
    i = end;
  }
  return tokens;
}

/** A name's text: a word as it is, a quoted name without its quotes (undefined when it holds escapes). */
function nameOf(token: Token | undefined): string | undefined {
  if (token?.kind === 'word') return token.text;
  if (token?.kind !== 'quoted' || token.text.includes('\\')) return undefined;
  const quote = token.text[0]!;
  return token.text.slice(1, -1).replaceAll(quote + quote, quote);
}

/** A constant argument's value: a string literal, an integer, or a bound parameter of those types. */
function constantOf(tokens: Token[], at: number, params: Params): { value: string | number; next: number } | undefined {
  const token = tokens[at];
  if (token?.kind === 'string') {
    const value = unquoteLiteral(token.text);
    return value === undefined ? undefined : { value, next: at + 1 };
  }
  const negative = token?.kind === 'punct' && token.text === '-';
  const digits = negative ? tokens[at + 1] : token;
  if (digits?.kind === 'number' && /^\d+$/.test(digits.text) && Number.isSafeInteger(Number(digits.text))) {
    return { value: (negative ? -1 : 1) * Number(digits.text), next: at + (negative ? 2 : 1) };
  }
  if (token?.kind !== 'param') return undefined;
  const [, name, type] = PARAM_PARTS.exec(token.text)!;
  const value = params[name!];
  if (type === 'String' && typeof value === 'string') return { value, next: at + 1 };
  if (INTEGER_TYPE.test(type!) && typeof value === 'number' && Number.isSafeInteger(value)) return { value, next: at + 1 };
  return undefined;
}

const isPunct = (token: Token | undefined, text: string) => token?.kind === 'punct' && token.text === text;

/** The read whose function name is token `at`, or undefined when the call there is not one. */
function callAt(sql: string, tokens: Token[], at: number, params: Params): ReadCall | undefined {
  const fn = tokens[at]!;
  if (fn.kind !== 'word' || !READ_FUNCTIONS.has(fn.text) || !isPunct(tokens[at + 1], '(') || isPunct(tokens[at - 1], '.')) return undefined;
  const first = at + 2;
  let i = first;
  while (nameOf(tokens[i]) !== undefined && isPunct(tokens[i + 1], '.')) i += 2;
  const object = nameOf(tokens[i]);
  if (object === undefined || !OBJECT_COLUMNS.has(object)) return undefined;
  const objectStart = tokens[i]!.start;
  i++;
  const args: Array<string | number> = [];
  while (isPunct(tokens[i], ',')) {
    const constant = constantOf(tokens, i + 1, params);
    if (!constant) return undefined;
    args.push(constant.value);
    i = constant.next;
  }
  if (!isPunct(tokens[i], ')')) return undefined;
  const keys = fn.text === 'JSONExtract' ? args.length - 1 : args.length;
  if (keys < 1 || (fn.text === 'JSONExtract' && typeof args.at(-1) !== 'string')) return undefined;
  const read: JsonRead = { fn: fn.text, object, args };
  return { start: fn.start, end: tokens[i]!.end, qualifier: sql.slice(tokens[first]!.start, objectStart), read, signature: signatureOf(read) };
}

/** Every read by constant keys in `sql`, in order; `params` are the values of its `{name:Type}` placeholders. */
export function readCalls(sql: string, params: Params = {}): ReadCall[] {
  const tokens = tokenize(sql);
  const calls: ReadCall[] = [];
  for (let at = 0; at < tokens.length; at++) {
    const call = callAt(sql, tokens, at, params);
    if (!call) continue;
    calls.push(call);
    while (at + 1 < tokens.length && tokens[at + 1]!.start < call.end) at++;
  }
  return calls;
}

/** A back-quoted name, escaped as ClickHouse reads one. */
const quotedName = (name: string) => '`' + name.replace(/[\\`]/g, (c) => '\\' + c) + '`';

/**
 * `sql` with each of `calls` replaced by the column `columnOf` gives it, under the same qualifier,
 * named as the call was (its signature), so that result columns keep their names.
 */
export function replaceCalls(sql: string, calls: readonly ReadCall[], columnOf: (call: ReadCall) => string): string {
  let out = '';
  let from = 0;
  for (const call of [...calls].sort((a, b) => a.start - b.start)) {
    out += `${sql.slice(from, call.start)}(${call.qualifier}${columnOf(call)} AS ${quotedName(call.signature)})`;
    from = call.end;
  }
  return out + sql.slice(from);
}
