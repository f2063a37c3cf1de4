import { expect, test } from 'bun:test';
import { parseJsonLossless } from '../../src/lossless-json';
import { parseResultRows, resultRowsJson } from '../../src/queries/result-rows';

/** JSONEachRow text as the engine writes it for POST /queries. */
const TEXTS = {
  empty: '',
  'numbers beyond a double, escapes, unicode': '{"id":18446744073709551615,"d":0.1000000000000000055511151231257827,"s":"a\\"b\\\\c\\/d\\n","u":"é😀"}\n{"id":1,"d":2,"s":"","u":"\\u0000"}\n',
  'an object column, and one behind an alias': '{"properties":"{\\"plan\\":\\"pro\\",\\"n\\":12345678901234567890}","e.traits":"{}","x":1}\n{"properties":"not an object","e.traits":"{\\"a\\":[1,2]}","x":2}\n',
  'without a final newline': '{"a":1}\n{"a":2}',
};

for (const [what, text] of Object.entries(TEXTS)) {
  test(`the answer's JSON text of the rows is the rows: ${what}`, () => {
    const json = resultRowsJson(text);
    // What POST /queries answered before: its rows made into objects and written out again.
    expect(parseJsonLossless(json)).toEqual(parseJsonLossless(JSON.stringify(parseResultRows(text))));
    expect(JSON.stringify(parseJsonLossless(json))).toBe(JSON.stringify(parseResultRows(text)));
  });
}
