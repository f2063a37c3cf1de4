import { afterAll, expect, test } from 'bun:test';
import review from '../../src/queries/function-review.json' with { type: 'json' };
import { functionVerdict, REVIEWED_ENGINE } from '../../src/queries/function-allowlist';
import { typeProblem } from '../../src/queries/type-grammar';
import { EmbeddedStorage } from '../../src/storage/embedded';
import { describeInProcess } from '../helpers/deno-service';
import { ENGINE_DIR } from '../helpers/engine-dir';

/** Written by the parser for SQL syntax; the engine lists no function of these names. */
const SYNTAX = new Set(['lambda', 'exists', 'grouping', 'untuple']);

describeInProcess('the reviewed list of functions, against the engine', () => {
  const storage = new EmbeddedStorage(ENGINE_DIR, 1);
  afterAll(() => storage.close());
  const engineFunctions = () =>
    storage.query('SELECT name, alias_to AS aliasTo, case_insensitive AS caseInsensitive FROM system.functions') as Promise<
      { name: string; aliasTo: string; caseInsensitive: number }[]
    >;

  test('every function of the engine is in exactly one family (an engine upgrade adds functions to review)', async () => {
    const reviewed = review.families.flatMap((family) => family.functions);
    expect(reviewed.length).toBe(new Set(reviewed).size);
    const unreviewed = (await engineFunctions()).filter((f) => !f.aliasTo && !reviewed.includes(f.name)).map((f) => f.name);
    expect(unreviewed).toEqual([]);
  });

  test('every reviewed name, alias and case-insensitive spelling is the engine’s', async () => {
    const functions = await engineFunctions();
    const names = new Set(functions.map((f) => f.name));
    const missing = review.families.flatMap((family) => family.functions).filter((name) => !names.has(name) && !SYNTAX.has(name));
    expect(missing).toEqual([]);
    expect(review.aliases as Record<string, string>).toEqual(Object.fromEntries(functions.filter((f) => f.aliasTo).map((f) => [f.name, f.aliasTo])));
    expect(review.caseInsensitive.sort()).toEqual(functions.filter((f) => f.caseInsensitive).map((f) => f.name).sort());
    const [engine] = (await storage.query('SELECT version() AS version')) as { version: string }[];
    expect(REVIEWED_ENGINE).toBe(engine!.version);
  });

  test('the guard allows exactly the functions of allowed families, under every name the engine gives them', async () => {
    const verdictOf = new Map(review.families.flatMap((family) => family.functions.map((name) => [name.toLowerCase(), family.verdict === 'allowed'] as const)));
    // An alias's target as the engine writes it: another spelling (connectionID), or a combined aggregate (groupArrayArray).
    const expected = (target: string) => verdictOf.get(target.toLowerCase()) ?? verdictOf.get(target.toLowerCase().replace(/(?:if|array|state|merge|ornull|ordefault|distinct|foreach|map|null)$/, ''));
    const wrong = (await engineFunctions())
      .map((f) => ({ name: f.name, expected: expected(f.aliasTo || f.name), got: functionVerdict(f.name).allowed }))
      .filter((f) => f.expected !== f.got);
    // toString was refused: the alias table was an object, and `toString` found Object.prototype's.
    expect(wrong).toEqual([]);
  });

  test('every type the grammar accepts is a type of the engine', async () => {
    for (const type of ACCEPTED_TYPES) {
      expect({ type, problem: typeProblem(type) }).toEqual({ type, problem: undefined });
      const [row] = await storage.query('SELECT toTypeName(defaultValueOfTypeName({type:String})) AS t', { type });
      expect(row!.t).toBeString();
    }
  });
});

const ACCEPTED_TYPES = [
  'UInt64',
  'Nullable(String)',
  "DateTime64(3, 'Europe/Paris')",
  "DateTime('UTC')",
  'Decimal(10, 2)',
  'Decimal64(4)',
  'FixedString(16)',
  "Enum8('a' = 1, 'b' = -2)",
  'Array(Tuple(a String, b Array(LowCardinality(Nullable(String)))))',
  'Map(String, Array(UInt8))',
  'Variant(String, UInt64)',
  'int',
  'BIGINT',
  'text',
  'boolean',
  'JSON',
  'IPv6',
];

test('types that carry more than data are refused by the grammar', () => {
  for (const type of [
    'AggregateFunction(sum, UInt64)',
    'SimpleAggregateFunction(sum, UInt64)',
    'Nested(a String)',
    "Tuple(a String ALIAS file('/etc/passwd'))",
    "Tuple(a String DEFAULT hostName())",
    'String, b String',
    "JSON(max_dynamic_paths = 1)",
    'Array(String',
    'Nullable(String))',
    'UInt8 -- comment',
    "DateTime64(file('x'))",
    'DOUBLE PRECISION',
    'String(1)',
    'Array(' .repeat(40) + 'String' + ')'.repeat(40),
    'constructor(String)',
    'toString',
  ]) {
    expect({ type, problem: typeProblem(type) }).toEqual({ type, problem: expect.any(String) });
  }
});

test('functions resolve through aliases, case-insensitive spellings and aggregate combinators', () => {
  expect(functionVerdict('COUNT')).toEqual({ allowed: true, name: 'count' });
  expect(functionVerdict('DATE_FORMAT')).toEqual({ allowed: true, name: 'formatDateTime' });
  expect(functionVerdict('uniqExactIf')).toEqual({ allowed: true, name: 'uniqExact' });
  expect(functionVerdict('sumArrayIfOrNull')).toEqual({ allowed: true, name: 'sum' });
  expect(functionVerdict('FILE')).toMatchObject({ allowed: false });
  expect(functionVerdict('hostname')).toMatchObject({ allowed: false });
  expect(functionVerdict('dictGetString')).toMatchObject({ allowed: false });
  expect(functionVerdict('fileIf')).toMatchObject({ allowed: false });
  expect(functionVerdict('aNameNoEngineHas')).toEqual({ allowed: false, name: 'aNameNoEngineHas', reason: expect.stringContaining('not on the reviewed list') });
});
