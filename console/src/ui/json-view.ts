import { h } from '../dom';

/** Indented JSON with its keys, strings and numbers told apart by class (colours live in the CSS). */
export function jsonView(value: unknown): HTMLElement {
  const pre = h('pre', { class: 'json' });
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  // Tokens of JSON.stringify's own output: keys, strings, numbers, literals, and the rest.
  const token = /("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;
  let last = 0;
  for (const m of text.matchAll(token)) {
    pre.append(text.slice(last, m.index));
    const [whole, string, colon, num, literal] = m;
    if (string !== undefined) {
      pre.append(h('span', { class: colon ? 'json-key' : 'json-string' }, string));
      if (colon) pre.append(colon);
    } else if (num !== undefined) pre.append(h('span', { class: 'json-number' }, num));
    else if (literal !== undefined) pre.append(h('span', { class: 'json-literal' }, literal));
    last = m.index + whole.length;
  }
  pre.append(text.slice(last));
  return pre;
}
