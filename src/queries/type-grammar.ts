/**
 * The guard's own grammar for the type names that a statement passes as strings (`CAST(x,
 * 'Nullable(String)')`, JSONExtract's last argument, a query parameter's type). The engine parses
 * such a string as a type, and a type can carry more than data (an aggregate function's state,
 * nested column definitions), so only the types below pass, with the arguments each takes:
 * numbers, time zone names, enum members and other types. Everything else is refused.
 */

/** How a type family takes arguments. */
type Arguments =
  | 'none'
  | 'numbers' // FixedString(16), Decimal(10, 2), Time64(3)
  | 'time zone' // DateTime('UTC')
  | 'precision, time zone' // DateTime64(3, 'UTC')
  | 'enum' // Enum8('a' = 1, 'b' = 2)
  | 'one type' // Nullable(T), Array(T), LowCardinality(T)
  | 'two types' // Map(K, V)
  | 'types' // Variant(T, U)
  | 'tuple' // Tuple(T, U) or Tuple(a T, b U)
  | 'type, number'; // QBit(Float32, 8)

const FAMILIES: Record<string, Arguments> = {
  ...Object.fromEntries(
    `UInt8 UInt16 UInt32 UInt64 UInt128 UInt256 Int8 Int16 Int32 Int64 Int128 Int256 Float32 Float64 BFloat16
    Bool String UUID Date Date32 IPv4 IPv6 Nothing Point Ring Polygon MultiPolygon LineString MultiLineString
    Geometry JSON Dynamic Time IntervalNanosecond IntervalMicrosecond IntervalMillisecond IntervalSecond
    IntervalMinute IntervalHour IntervalDay IntervalWeek IntervalMonth IntervalQuarter IntervalYear`
      .split(/\s+/)
      .map((name) => [name, 'none' as const]),
  ),
  FixedString: 'numbers',
  Decimal: 'numbers',
  Decimal32: 'numbers',
  Decimal64: 'numbers',
  Decimal128: 'numbers',
  Decimal256: 'numbers',
  Time64: 'numbers',
  DateTime: 'time zone',
  DateTime32: 'time zone',
  DateTime64: 'precision, time zone',
  Enum: 'enum',
  Enum8: 'enum',
  Enum16: 'enum',
  Nullable: 'one type',
  LowCardinality: 'one type',
  Array: 'one type',
  Map: 'two types',
  Variant: 'types',
  Tuple: 'tuple',
  QBit: 'type, number',
};

/** The engine's one-word aliases (system.data_type_families), each for its family. */
const ALIASES: Record<string, string> = {
  bigint: 'Int64', binary: 'FixedString', bit: 'UInt64', blob: 'String', byte: 'Int8', bytea: 'String', char: 'String',
  character: 'String', clob: 'String', dec: 'Decimal', double: 'Float64', enum: 'Enum', fixed: 'Decimal', float: 'Float32',
  geometry: 'Geometry', inet4: 'IPv4', inet6: 'IPv6', int: 'Int32', int1: 'Int8', integer: 'Int32', longblob: 'String',
  longtext: 'String', mediumblob: 'String', mediumint: 'Int32', mediumtext: 'String', nchar: 'String', numeric: 'Decimal',
  nvarchar: 'String', real: 'Float32', set: 'UInt64', signed: 'Int64', single: 'Float32', smallint: 'Int16', text: 'String',
  timestamp: 'DateTime', tinyblob: 'String', tinyint: 'Int8', tinytext: 'String', unsigned: 'UInt64', varbinary: 'String',
  varchar: 'String', varchar2: 'String', year: 'UInt16', bool: 'Bool', boolean: 'Bool',
};

/** Families the engine names case-insensitively (system.data_type_families). */
const CASE_INSENSITIVE = new Map(
  ['Bool', 'Date', 'Date32', 'DateTime', 'DateTime32', 'DateTime64', 'Decimal', 'Decimal32', 'Decimal64', 'Decimal128', 'Decimal256', 'Enum', 'JSON', 'Time', 'Time64'].map(
    (name) => [name.toLowerCase(), name],
  ),
);

const MAX_LENGTH = 2000;
const MAX_DEPTH = 16;

type Token = { kind: 'name' | 'number' | 'string' | 'punctuation'; text: string };

const TOKEN = /\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(-?\d+(?:\.\d+)?)|('(?:[^'\\]|\\.)*')|([(),=]))/y;

function tokens(text: string): Token[] | string {
  const found: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match) return `unexpected text at position ${at + 1}`;
    const [, name, number, string, punctuation] = match;
    if (name !== undefined) found.push({ kind: 'name', text: name });
    else if (number !== undefined) found.push({ kind: 'number', text: number });
    else if (string !== undefined) found.push({ kind: 'string', text: string });
    else found.push({ kind: 'punctuation', text: punctuation! });
  }
  return found;
}

/** A family's canonical name, or undefined for one the grammar does not know. */
function family(name: string): string | undefined {
  // Own properties only: `constructor` or `toString` must not find Object.prototype's.
  if (Object.hasOwn(FAMILIES, name)) return name;
  const lower = name.toLowerCase();
  return CASE_INSENSITIVE.get(lower) ?? (Object.hasOwn(ALIASES, lower) ? ALIASES[lower] : undefined);
}

class TypeParser {
  private at = 0;
  constructor(private readonly list: Token[]) {}

  private peek(offset = 0): Token | undefined {
    return this.list[this.at + offset];
  }

  private take(kind: Token['kind'], text?: string): Token {
    const token = this.list[this.at];
    if (!token || token.kind !== kind || (text !== undefined && token.text !== text)) {
      throw new Error(`expected ${text ?? `a ${kind}`} ${token ? `but found ${token.text}` : 'at the end'}`);
    }
    this.at += 1;
    return token;
  }

  private accept(text: string): boolean {
    if (this.peek()?.kind === 'punctuation' && this.peek()?.text === text) {
      this.at += 1;
      return true;
    }
    return false;
  }

  whole(): void {
    this.type(0);
    if (this.at < this.list.length) throw new Error(`unexpected ${this.list[this.at]!.text} after the type`);
  }

  private type(depth: number): void {
    if (depth > MAX_DEPTH) throw new Error(`types nest at most ${MAX_DEPTH} deep`);
    const written = this.take('name').text;
    const name = family(written);
    if (name === undefined) throw new Error(`${written} is not a type the sandbox accepts`);
    const kind = FAMILIES[name]!;
    if (!this.accept('(')) {
      if (kind === 'none' || kind === 'time zone' || name === 'Decimal') return;
      throw new Error(`${name} needs its arguments`);
    }
    if (kind === 'none') throw new Error(`${name} takes no arguments here`);
    const count = this.arguments(kind, depth);
    this.take('punctuation', ')');
    const expected: Partial<Record<Arguments, [number, number]>> = {
      numbers: [1, 2],
      'time zone': [1, 1],
      'precision, time zone': [1, 2],
      'one type': [1, 1],
      'two types': [2, 2],
      'type, number': [2, 2],
    };
    const [min, max] = expected[kind] ?? [1, Infinity];
    if (count < min || count > max) throw new Error(`${name} takes ${min === max ? min : `${min} to ${max}`} arguments, not ${count}`);
  }

  /** The arguments of a family, up to the closing parenthesis; returns how many there were. */
  private arguments(kind: Arguments, depth: number): number {
    let count = 0;
    do {
      this.argument(kind, count, depth);
      count += 1;
    } while (this.accept(','));
    return count;
  }

  private argument(kind: Arguments, index: number, depth: number): void {
    switch (kind) {
      case 'numbers':
        this.take('number');
        return;
      case 'time zone':
        this.take('string');
        return;
      case 'precision, time zone':
        this.take(index === 0 ? 'number' : 'string');
        return;
      case 'enum':
        this.take('string');
        if (this.accept('=')) this.take('number');
        return;
      case 'type, number':
        if (index === 0) this.type(depth + 1);
        else this.take('number');
        return;
      case 'tuple':
        // `a String` names an element; a name alone is a type.
        if (this.peek()?.kind === 'name' && this.peek(1)?.kind === 'name') this.take('name');
        this.type(depth + 1);
        return;
      default:
        this.type(depth + 1);
    }
  }
}

/** Why `text` is not a type the sandbox accepts, or undefined when it is one. */
export function typeProblem(text: string): string | undefined {
  if (text.length > MAX_LENGTH) return `a type name is at most ${MAX_LENGTH} characters`;
  const list = tokens(text);
  if (typeof list === 'string') return list;
  try {
    new TypeParser(list).whole();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
