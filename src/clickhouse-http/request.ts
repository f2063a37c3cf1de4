import { RawBody } from '../http/json-body';
import { MAX_STATEMENT_LENGTH } from '../queries/model';
import type { Params } from '../storage/storage';
import { clickhouseError } from './errors';
import { DEFAULT_FORMAT, outputFormat } from './formats';
import { splitFormat } from './statement-text';

/** A request of ClickHouse's HTTP interface, as the statement's run needs it. */
export interface ClickHouseRequest {
  /** The statement without its FORMAT clause. */
  statement: string;
  format: string;
  /** Values of `{name:Type}` parameters, from `param_<name>`. */
  params: Params;
  /** Every other URL parameter that is not part of the protocol: ClickHouse takes them as settings. */
  settings: Map<string, string>;
  /** The database asked for (`database` or X-ClickHouse-Database), if any. */
  database: string | undefined;
  queryId: string;
  /** Whether the client asked for a compressed answer (`enable_http_compression=1`). */
  compress: boolean;
}

/**
 * URL parameters of the protocol itself rather than settings: credentials, the session (each
 * request stands alone here, so a session's id and timeout change nothing), buffering (an answer
 * is always read whole before it is sent, as with `wait_end_of_query=1`).
 */
const PROTOCOL_PARAMETERS = new Set([
  'query',
  'database',
  'default_format',
  'user',
  'password',
  'quota_key',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'buffer_size',
  'wait_end_of_query',
  'compress',
  'decompress',
  'enable_http_compression',
  'http_zlib_compression_level',
]);

const PARAM_PREFIX = 'param_';

/** ClickHouse's escapes in a parameter's value (its TabSeparated text form), and what each stands for. */
const ESCAPES: Record<string, string> = { b: '\b', f: '\f', r: '\r', n: '\n', t: '\t', '0': '\0', a: '\x07', v: '\v' };

/** Types whose value is a literal of its own (`['a','b']`), which the engine reads as it is. */
const COMPOSITE_TYPE = /^(?:Array|Map|Tuple|Nested)\b/;

/** The type of each `{name:Type}` placeholder of the statement. */
function placeholderTypes(statement: string): Map<string, string> {
  return new Map([...statement.matchAll(/\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([A-Za-z][A-Za-z0-9_]*)/g)].map(([, name, type]) => [name!, type!]));
}

/**
 * A parameter's value as the client meant it: clients send a scalar in ClickHouse's escaped text
 * form (`it\'s`, `a\tb`, `\N` for NULL), and both backends take it unescaped, escaping it again
 * their own way. A composite value (an array's `['a','b']`) is passed on as it came.
 */
function parameterValue(text: string, type: string | undefined): string | null {
  if (type !== undefined && COMPOSITE_TYPE.test(type)) return text;
  if (text === '\\N') return null;
  return text.replace(/\\(x[0-9A-Fa-f]{2}|[\s\S])/g, (_, escaped: string) =>
    escaped.length === 3 ? String.fromCharCode(parseInt(escaped.slice(1), 16)) : (ESCAPES[escaped] ?? escaped),
  );
}
/** A query id is echoed in a header: printable, without spaces, and short. */
const QUERY_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The statement is the `query` parameter followed by the body (a POST may split it so, as
 * ClickHouse allows), joined by a line break. Its FORMAT clause, else `default_format`, else
 * X-ClickHouse-Format, names the output format.
 */
export function parseRequest(request: Request, body: unknown): ClickHouseRequest {
  const url = new URL(request.url);
  const search = url.searchParams;
  if (search.get('compress') === '1' || search.get('decompress') === '1') {
    throw clickhouseError('NOT_IMPLEMENTED', "ClickHouse's native compression (compress=1, decompress=1) is not supported: use HTTP compression (enable_http_compression=1 with Accept-Encoding, and Content-Encoding for the body)");
  }
  const text = [search.get('query'), body instanceof RawBody ? body.text : undefined].filter((part) => part).join('\n');
  if (text.trim() === '') throw clickhouseError('SYNTAX_ERROR', 'Empty query');
  if (text.length > MAX_STATEMENT_LENGTH) throw clickhouseError('QUERY_IS_TOO_LARGE', `The query is ${text.length} characters long; at most ${MAX_STATEMENT_LENGTH} are taken`);
  const { statement, format } = splitFormat(text);
  const params: Params = {};
  const types = placeholderTypes(statement);
  const settings = new Map<string, string>();
  for (const [name, value] of search) {
    const param = name.startsWith(PARAM_PREFIX) ? name.slice(PARAM_PREFIX.length) : undefined;
    if (param !== undefined) params[param] = parameterValue(value, types.get(param));
    else if (!PROTOCOL_PARAMETERS.has(name)) settings.set(name, value);
  }
  const queryId = search.get('query_id') ?? '';
  return {
    statement,
    format: outputFormat(format ?? search.get('default_format') ?? request.headers.get('x-clickhouse-format') ?? DEFAULT_FORMAT),
    params,
    settings,
    database: search.get('database') ?? request.headers.get('x-clickhouse-database') ?? undefined,
    queryId: QUERY_ID.test(queryId) ? queryId : crypto.randomUUID(),
    compress: search.get('enable_http_compression') === '1',
  };
}
