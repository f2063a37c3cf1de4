import { invalidInput } from '../http/problem';

/**
 * A trends formula (`A / B * 100`): arithmetic over the series by letter (A the first), parsed
 * here and applied to the series' answered numbers, period by period. A division by zero is 0.
 */

type Node = { kind: 'number'; value: number } | { kind: 'series'; index: number } | { kind: 'negate'; operand: Node } | { kind: 'binary'; operator: string; left: Node; right: Node };

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z])|([-+*/()]))/y;

function tokens(text: string, fail: (detail: string) => never): string[] {
  const found: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      if (text.slice(at).trim() === '') break;
      fail(`unexpected ${JSON.stringify(text.slice(at).trim()[0])} at ${at + 1}`);
    }
    found.push((m[1] ?? m[2] ?? m[3])!);
  }
  return found;
}

/** Parses `text` over `seriesCount` series; 400 at `pointer` when it is not a formula of them. */
export function parseFormula(text: string, seriesCount: number, pointer: string): Node {
  const fail = (detail: string): never => {
    throw invalidInput(`the formula ${JSON.stringify(text)} cannot be read: ${detail}`, [{ pointer, detail: `must be arithmetic (+ - * / and parentheses) over the series letters A to ${String.fromCharCode(64 + seriesCount)} and numbers` }]);
  };
  const list = tokens(text, fail);
  let i = 0;
  const peek = () => list[i];
  const expression = (): Node => {
    let left = term();
    while (peek() === '+' || peek() === '-') left = { kind: 'binary', operator: list[i++]!, left, right: term() };
    return left;
  };
  const term = (): Node => {
    let left = factor();
    while (peek() === '*' || peek() === '/') left = { kind: 'binary', operator: list[i++]!, left, right: factor() };
    return left;
  };
  const factor = (): Node => {
    const token = list[i++];
    if (token === undefined) return fail('it ends too early');
    if (token === '-') return { kind: 'negate', operand: factor() };
    if (token === '(') {
      const inner = expression();
      if (list[i++] !== ')') fail('a parenthesis is not closed');
      return inner;
    }
    if (/^[A-Za-z]$/.test(token)) {
      const index = token.toUpperCase().charCodeAt(0) - 65;
      if (index >= seriesCount) fail(`there is no series ${token.toUpperCase()}`);
      return { kind: 'series', index };
    }
    if (/^\d/.test(token)) return { kind: 'number', value: Number(token) };
    return fail(`unexpected ${JSON.stringify(token)}`);
  };
  const tree = expression();
  if (i < list.length) fail(`unexpected ${JSON.stringify(list[i])}`);
  return tree;
}

/** The formula's value for one point, given each series' value there. */
export function evaluateFormula(node: Node, values: readonly number[]): number {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'series':
      return values[node.index] ?? 0;
    case 'negate':
      return -evaluateFormula(node.operand, values);
    case 'binary': {
      const left = evaluateFormula(node.left, values);
      const right = evaluateFormula(node.right, values);
      if (node.operator === '+') return left + right;
      if (node.operator === '-') return left - right;
      if (node.operator === '*') return left * right;
      return right === 0 ? 0 : left / right;
    }
  }
}

export type Formula = Node;
