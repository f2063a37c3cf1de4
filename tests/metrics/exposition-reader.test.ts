import { expect, test } from 'bun:test';
import { parseExposition } from '../helpers/exposition';

// The endpoint's tests lean on this reader: it must refuse what a scraper would.
const refused: Array<[string, string]> = [
  ['a sample without HELP and TYPE', 'x_total 1\n'],
  ['a counter without _total', '# HELP x X.\n# TYPE x counter\nx 1\n'],
  ['an unquoted label value', '# HELP x_total X.\n# TYPE x_total counter\nx_total{a=b} 1\n'],
  ['an unescaped double quote', '# HELP x_total X.\n# TYPE x_total counter\nx_total{a="b"c"} 1\n'],
  ['a value that is not a number', '# HELP x_total X.\n# TYPE x_total counter\nx_total one\n'],
  ['no final line feed', '# HELP x_total X.\n# TYPE x_total counter\nx_total 1'],
  ['buckets that are not cumulative', '# HELP h H.\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
  ['no +Inf bucket', '# HELP h H.\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
  ['+Inf other than _count', '# HELP h H.\n# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'],
  ['a repeated series', '# HELP x_total X.\n# TYPE x_total counter\nx_total 1\nx_total 2\n'],
];
for (const [what, text] of refused) {
  test(`the exposition reader refuses ${what}`, () => {
    expect(() => parseExposition(text)).toThrow();
  });
}

test('the exposition reader takes escaped label values and special values', () => {
  const families = parseExposition('# HELP g G.\n# TYPE g gauge\ng{a="x\\"y\\\\z\\n"} +Inf\n');
  expect(families.get('g')!.samples).toEqual([{ name: 'g', labels: { a: 'x"y\\z\n' }, value: Infinity }]);
});
