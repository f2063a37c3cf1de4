import { afterAll, describe, expect, test } from 'bun:test';
import { Session } from 'chdb';
import { quoteLiteral, readColumnName, signatureOf, unquoteLiteral } from '../../src/properties/json-read';
import { readCalls, replaceCalls } from '../../src/properties/read-calls';
import { ENGINE_DIR } from '../helpers/engine-dir';

const engine = new Session(ENGINE_DIR);
afterAll(() => engine.close());

const found = (sql: string, params = {}) => readCalls(sql, params).map((c) => [sql.slice(c.start, c.end), c.qualifier, c.signature]);

describe('reads found in a statement', () => {
  test('calls by constant keys of properties, traits and context, qualified or not', () => {
    const sql = "SELECT JSONExtract(properties, 'plan', 'String'), sum(JSONExtractFloat(e.properties, 'amount')) FROM events AS e WHERE JSONHas(`context`, 'page', 'path') AND JSONExtract(traits, 1, -2, 'Int64') > 0";
    expect(found(sql)).toEqual([
      ["JSONExtract(properties, 'plan', 'String')", '', "JSONExtract(properties, 'plan', 'String')"],
      ["JSONExtractFloat(e.properties, 'amount')", 'e.', "JSONExtractFloat(properties, 'amount')"],
      ["JSONHas(`context`, 'page', 'path')", '', "JSONHas(context, 'page', 'path')"],
      ["JSONExtract(traits, 1, -2, 'Int64')", '', "JSONExtract(traits, 1, -2, 'Int64')"],
    ]);
  });

  test('bound keys are read from their parameters', () => {
    expect(found("SELECT JSONType(properties, {p_0:String}, {p_1:UInt8}) FROM events", { p_0: "it's", p_1: 2 })).toEqual([
      ['JSONType(properties, {p_0:String}, {p_1:UInt8})', '', "JSONType(properties, 'it\\'s', 2)"],
    ]);
  });

  test('not reads: text in literals and quoted names, computed keys, other columns, no key, other functions', () => {
    const sql = [
      "SELECT 'JSONExtract(properties, \\'a\\', \\'String\\')'",
      "`JSONHas(properties, 'x')`",
      "JSONExtractString(properties, concat('a', 'b'))",
      "JSONExtractString(userId, 'a')",
      "JSONExtract(properties, 'String')",
      "JSONExtractString(properties || '', 'a')",
      "JSONExtractKeysAndValues(properties, 'a', 'String')",
      "JSONExtractString(properties, {missing:String})",
      "JSONExtractString(properties, 'a\\d')",
    ].join(', ');
    expect(found(sql)).toEqual([]);
  });

  test('a statement cut short in a literal or comment has no reads after the cut', () => {
    expect(found("SELECT JSONHas(properties, 'a') /* JSONHas(properties, 'b')")).toEqual([["JSONHas(properties, 'a')", '', "JSONHas(properties, 'a')"]]);
    expect(found("SELECT JSONHas(properties, 'a), JSONHas(properties, 'b')")).toEqual([]);
  });
});

describe('replacing reads by their columns', () => {
  test('each read becomes its column under the same qualifier, named as the read was', () => {
    const sql = "SELECT JSONExtract(e.properties, 'plan', 'String') AS p, count() FROM events AS e WHERE JSONHas(properties, 'x') GROUP BY p";
    const calls = readCalls(sql);
    const name = (signature: string) => readColumnName(signature);
    expect(replaceCalls(sql, calls, (c) => name(c.signature))).toBe(
      `SELECT (e.${name("JSONExtract(properties, 'plan', 'String')")} AS \`JSONExtract(properties, 'plan', 'String')\`) AS p, count() FROM events AS e WHERE (${name("JSONHas(properties, 'x')")} AS \`JSONHas(properties, 'x')\`) GROUP BY p`,
    );
  });

  test('a column is named by 16 hex digits of its read', () => {
    expect(readColumnName("JSONHas(properties, 'x')")).toMatch(/^property_read_[0-9a-f]{16}$/);
  });
});

describe('literals as ClickHouse writes them', () => {
  const values = ['plan', "it's", 'back\\slash', 'new\nline', 'tab\t', 'nul\u0000x', 'bs\b ff\f cr\r', 'ctl\u0001\u001f\u007f', 'é😀', ''];
  test('a signature is the name ClickHouse gives the call, and its literals read back', () => {
    for (const value of values) {
      const signature = signatureOf({ fn: 'JSONExtract', object: 'properties', args: [value, 'String'] });
      const formatted = engine.queryBind('SELECT formatQuery({sql:String}) AS f', { sql: `SELECT ${signature}` }, 'JSONEachRow');
      expect(JSON.parse(formatted).f).toBe(`SELECT ${signature}`);
      expect(unquoteLiteral(quoteLiteral(value))).toBe(value);
    }
  });
});
