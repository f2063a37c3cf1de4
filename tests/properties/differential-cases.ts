import { quoteLiteral } from '../../src/properties/json-read';
import { seededRandom } from '../helpers/seeded-random';

/**
 * The differential test's material: events whose JSON objects hold odd values (as JSON text, so
 * that numbers keep their spelling), and JSONExtract* expressions over them: each function and
 * type name, present, missing and nested keys, positions, keys that need escaping.
 */

/** Values as JSON text: strings, numbers of every spelling, numbers in strings, booleans, null, arrays, objects. */
const VALUES = [
  '"pro"', '""', '"42"', '" 42"', '"1e3"', '"true"', '"a\\"b\\\\c"', '"\\u00e9\\ud83d\\ude00"', '"line\\nbreak"', '"日本語"',
  '42', '-7', '0', '-0', '42.7', '1.0', '1.50', '1e2', '1E-7', '-1.5e-300', '5e-324', '0.1000000000000000055511151231257827',
  '9007199254740993', '18446744073709551615', '-9223372036854775808', '123456789012345678901',
  'true', 'false', 'null', '[]', '{}', '[1,"x",null,[2]]', '["a","b"]', '{"a":1,"b":{"c":"deep"}}', '{"a":"x","a.b":2}',
];

/** Keys the objects hold (besides many-keys events' k0..k299), the empty key and keys needing escapes included. */
const KEYS = ['plan', 'amount', 'n', 'tags', 'nested', 'é', 'a.b', "it's", 'back\\slash', 'new\nline', ''];

/** A JSON object's text with `count` of KEYS, each a value drawn from VALUES, in a drawn order. */
function objectText(random: () => number, count: number): string {
  const keys = [...KEYS].sort(() => random() - 0.5).slice(0, count);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${VALUES[Math.floor(random() * VALUES.length)]}`).join(',')}}`;
}

/** `count` events as the JSON text of one POST /events body, each with a messageId `m<offset + i>` to find it by. */
export function eventsBody(count: number, offset: number, seed: number): string {
  const random = seededRandom(seed);
  const events = Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    const manyKeys = n % 10 === 9 ? `{${Array.from({ length: 300 }, (_, k) => `"k${k}":${k % 7 === 0 ? `"${k}"` : k}`).join(',')}}` : undefined;
    // One object in twenty holds a number beyond a double's range: the engine's JSON reader refuses
    // the whole object, so every read of it answers the type's default.
    const properties = n % 20 === 7 ? `{"plan":"pro","huge":1e309}` : (manyKeys ?? objectText(random, 1 + Math.floor(random() * KEYS.length)));
    const parts = [`"type":"track"`, `"event":"e${n % 3}"`, `"messageId":"m${String(n).padStart(4, '0')}"`, `"properties":${properties}`];
    if (random() < 0.7) parts.push(`"traits":${objectText(random, 3)}`);
    if (random() < 0.7) parts.push(`"context":${objectText(random, 4)}`);
    return `{${parts.join(',')}}`;
  });
  return `{"events":[${events.join(',')}]}`;
}

const TYPES = ['String', 'UInt64', 'Int64', 'Int32', 'UInt8', 'Float64', 'Float32', 'Bool', 'Nullable(String)', 'Nullable(Int64)', 'Nullable(Float64)', 'Nullable(Bool)', 'LowCardinality(String)', 'Array(String)'];
const FUNCTIONS = ['JSONExtract', 'JSONExtract', 'JSONExtract', 'JSONExtractString', 'JSONExtractRaw', 'JSONExtractFloat', 'JSONExtractInt', 'JSONExtractUInt', 'JSONExtractBool', 'JSONHas', 'JSONType', 'JSONLength', 'JSONExtractArrayRaw', 'JSONExtractKeys'];
const PATHS: Array<Array<string | number>> = [
  ...KEYS.map((k) => [k]),
  ['missing'], ['k3'], ['k7'], ['k299'], ['nested', 'a'], ['nested', 'b', 'c'], ['plan', 'x'], ['tags', 1], ['tags', -1], ['n', 2], [1], [-1], [2, 'a'],
];

/** `count` expressions, each a call of a JSONExtract* function on properties, traits or context. */
export function expressions(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const made = new Set<string>();
  while (made.size < count) {
    const fn = pick(FUNCTIONS);
    const object = pick(['properties', 'properties', 'traits', 'context']);
    const args = pick(PATHS).map((a) => (typeof a === 'number' ? String(a) : quoteLiteral(a)));
    if (fn === 'JSONExtract') args.push(quoteLiteral(pick(TYPES)));
    made.add(`${fn}(${[object, ...args].join(', ')})`);
  }
  return [...made];
}
