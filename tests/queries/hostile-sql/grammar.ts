/**
 * A grammar of hostile ClickHouse statements, for the sandbox fuzzer (campaign.ts): table
 * functions whose structure strings carry ALIAS/DEFAULT/MATERIALIZED code, functions that read the
 * outside (files, dictionaries, the server), type strings, names that reach other databases or
 * shadow them, SETTINGS, FORMAT, INTO OUTFILE, column transformers, comments, quoting, parameters,
 * all mixed with benign parts; and benign statements that must run, so that a guard refusing
 * everything shows. Each production is picked by the derivation's seeded random source
 * (derivation.ts), so a seed and an index give the same statement again.
 */
import { Derivation, stringLiteral, type Alternative, type DoorName, type Terrain } from './derivation';

export type { DoorName, Terrain } from './derivation';

export interface HostileStatement {
  sql: string;
  /** `{name:Type}` values and URL settings, sent as URL parameters on /clickhouse. */
  params: Record<string, string>;
  settings: Record<string, string>;
  /** Benign: made to run (200), over the caller's own events only. */
  benign: boolean;
  /** The alternatives picked, in order. */
  productions: string[];
  knowsDataDir: boolean;
}

const alt = (name: string, weight: number, make: (d: Derivation) => string, recursive = false): Alternative => ({ name, weight, make, recursive });

// Names, and how they are written.

/** A name as written: plain, back- or double-quoted, with an escape, or in a look-alike spelling. */
function ident(d: Derivation, name: string): string {
  const roll = d.random();
  if (roll < 0.55) return name;
  if (roll < 0.75) return `\`${name}\``;
  if (roll < 0.85) return `"${name}"`;
  if (roll < 0.9) return `\`${name.replace(/^./, (c) => `\\x${c.charCodeAt(0).toString(16)}`)}\``;
  if (roll < 0.95) return d.pick([`\`${name}\\n\``, `\`${name}\n  TableIdentifier events\``]);
  return d.pick([`\`${name.replace('e', '\u0435')}\``, `\`${name}\u200b\``, `\`${name}\u0000\``]);
}

function qualified(d: Derivation, database: string, table: string): string {
  return `${ident(d, database)}${d.pick(['.', ' . ', '.'])}${ident(d, table)}`;
}

/** Tables of other databases: the victim's events and views, the metadata, the server's. */
function foreignTable(d: Derivation): string {
  const { other, meta } = d.terrain;
  return d.pick<() => string>([
    () => qualified(d, other, d.pick(['events', 'events_with_persons', 'persons'])),
    () => qualified(d, meta, d.pick(['webhooks', 'workspaces', 'api_keys', 'saved_insights'])),
    () => qualified(d, d.pick(['system', 'SYSTEM', 'information_schema', 'INFORMATION_SCHEMA']), d.pick(['tables', 'settings', 'databases', 'functions', 'processes', 'columns', 'one', 'user_directories', 'disks'])),
    () => `\`${other}.events\``,
    () => qualified(d, 'default', 'events'),
  ])();
}

// Paths: the canary file, the process's environment and command line, the ingest log.

const PROC_PATHS = ['/proc/self/environ', '/proc/self/cmdline', '/proc/1/environ', '/proc/self/root/proc/self/environ', '/proc/thread-self/environ'];

const path: Alternative[] = [
  alt('path:/proc', 4, (d) => d.pick(PROC_PATHS)),
  alt('path:relative-proc', 1, () => '../../../../../../proc/self/environ'),
  alt('path:canary-file', 4, (d) => ((d.knowsDataDir = true), d.terrain.canaryFile)),
  alt('path:canary-file-relative', 2, (d) => d.terrain.canaryFileFromCwd),
  alt('path:canary-file-dotted', 1, (d) => ((d.knowsDataDir = true), d.terrain.canaryFile.replace(/\//g, d.pick(['//', '/./'])))),
  alt('path:ingest-log', 2, (d) => ((d.knowsDataDir = true), `${d.terrain.dataDir}/ingest-log/0000000000000001.wal`)),
  alt('path:env-file', 1, (d) => d.pick(['.env.defaults', '.env', '/proc/self/cwd/.env.defaults'])),
];

/** A path as an expression: a literal, pieces joined, or a parameter on /clickhouse. */
function pathExpr(d: Derivation): string {
  const text = d.expand(path);
  const roll = d.random();
  if (d.onClickHouse && roll < 0.15) {
    const name = d.fresh('p');
    d.params[name] = text;
    d.productions.push('param:String');
    return `{${name}:String}`;
  }
  if (roll < 0.75) return stringLiteral(d, text);
  const cut = d.int(1, text.length - 1);
  return `concat(${stringLiteral(d, text.slice(0, cut))}, ${stringLiteral(d, text.slice(cut))})`;
}

// Functions that read the outside, and ways to bring their value back.

const outsideRead: Alternative[] = [
  alt('fn:file', 8, (d) => `file(${pathExpr(d)})`),
  alt('fn:file-default', 1, (d) => `file(${pathExpr(d)}, 'none')`),
  alt('fn:dictGet', 1, (d) => `dictGet('${d.terrain.other}.d', 'v', toUInt64(1))`),
  alt('fn:joinGet', 1, (d) => `joinGet('${d.terrain.other}.events', 'userId', '')`),
  alt('fn:hasColumnInTable', 1, (d) => `toString(hasColumnInTable('${d.terrain.other}', 'events', 'userId'))`),
  alt('fn:getSetting', 1, (d) => `toString(getSetting('${d.pick(['max_result_rows', 'readonly', 'user_files_path'])}'))`),
  alt('fn:getServerSetting', 1, (d) => `toString(getServerSetting('${d.pick(['path', 'user_files_path', 'tmp_path'])}'))`),
  alt('fn:server', 2, (d) => `toString(${d.pick(['hostName()', 'fqdn()', 'currentUser()', 'filesystemAvailable()', 'uptime()', 'buildId()', 'serverUUID()', 'getOSKernelVersion()', "getMacro('x')", 'tcpPort()', 'displayName()', "getClientHTTPHeader('authorization')", 'currentProfiles()', 'currentRoles()'])})`),
  alt('fn:catboost', 1, (d) => `toString(catboostEvaluate(${pathExpr(d)}, 1))`),
];

/** The outside value carried back: as it is, in the message of a failing cast or throw, in hex. */
const exfiltrate: Alternative[] = [
  alt('carry:plain', 5, (d) => d.expand(outsideRead)),
  alt('carry:failed-cast', 2, (d) => `CAST(${d.expand(outsideRead)} AS UInt64)`),
  alt('carry:throwIf', 1, (d) => `throwIf(1, ${d.expand(outsideRead)})`),
  alt('carry:hex', 1, (d) => `hex(${d.expand(outsideRead)})`),
  alt('carry:lambda', 2, (d) => `arrayMap(x -> file(x), [${pathExpr(d)}])[1]`),
  alt('carry:array', 1, (d) => `[${d.expand(outsideRead)}][1]`),
  alt('carry:tuple', 1, (d) => `tuple(${d.expand(outsideRead)}, 1).1`),
];

// Types, and the strings that hold them.

const type: Alternative[] = [
  alt('type:scalar', 6, (d) => d.pick(['UInt8', 'UInt64', 'String', 'Float64', 'Date', "DateTime64(3, 'UTC')", 'UUID', 'Bool', 'IPv4', 'LowCardinality(String)'])),
  alt('type:nullable', 1, (d) => `Nullable(${d.expand(type)})`, true),
  alt('type:array', 1, (d) => `Array(${d.expand(type)})`, true),
  alt('type:tuple', 2, (d) => `Tuple(a ${d.expand(type)}, b ${d.expand(type)})`, true),
  alt('type:map', 1, (d) => `Map(String, ${d.expand(type)})`, true),
  alt('type:semi-structured', 1, (d) => d.pick(['JSON', 'JSON(a String)', 'Dynamic', 'Variant(String, UInt64)', "Object('json')", 'Nested(a String)'])),
  alt('type:enum', 1, () => "Enum8('a' = 1, 'b' = 2)"),
  alt('type:aggregate', 1, (d) => d.pick(['AggregateFunction(uniq, String)', 'SimpleAggregateFunction(sum, UInt64)'])),
  alt('type:with-code', 2, (d) => `${d.pick(['String', 'Tuple(a String)'])} ${d.pick(['ALIAS', 'DEFAULT', 'MATERIALIZED'])} ${d.expand(exfiltrate)}`),
];

/** A column definition of a structure string; the code after ALIAS, DEFAULT or MATERIALIZED is what the engine runs. */
function columnDef(d: Derivation, name: string): string {
  const kind = d.pick(['', 'ALIAS', 'ALIAS', 'DEFAULT', 'MATERIALIZED', 'EPHEMERAL']);
  if (kind === '') return `${name} ${d.expand(type)}`;
  d.productions.push(`structure:${kind}`);
  d.structureColumns.push(name);
  return `${name} String ${kind} ${d.chance(0.85) ? d.expand(exfiltrate) : d.expand(expr)}`;
}

/** A structure string: `a UInt8, b String ALIAS file(...)`, as the table functions take it. */
function structure(d: Derivation): string {
  const columns = [`a ${d.pick(['UInt8', 'UInt64', 'String'])}`, columnDef(d, 'b')];
  if (d.chance(0.3)) columns.push(columnDef(d, 'c'));
  return stringLiteral(d, columns.join(', '));
}

// Table functions.

const LOOPBACK = 'http://127.0.0.1:1';

const tableFunction: Alternative[] = [
  alt('tf:generateRandom', 6, (d) => ((d.endless = true), `generateRandom(${structure(d)}${d.chance(0.5) ? `, ${d.int(1, 99)}` : ''})`)),
  alt('tf:values', 6, (d) => `values(${structure(d)}, ${d.pick(['1', '(1, 2)', "(1, 'x')", '1, 2'])})`),
  alt('tf:format', 4, (d) => `format(${d.pick(['JSONEachRow', 'CSV', 'TSV'])}, ${structure(d)}, ${stringLiteral(d, d.pick(['{"a":1}', '1', '1,x']))})`),
  alt('tf:null', 3, (d) => `null(${structure(d)})`),
  alt('tf:input', 1, (d) => `input(${structure(d)})`),
  alt('tf:file', 2, (d) => `file(${pathExpr(d)}${d.chance(0.6) ? `, ${d.pick(['LineAsString', 'RawBLOB', 'TSV', 'CSV'])}` : ''}${d.chance(0.4) ? `, ${structure(d)}` : ''})`),
  alt('tf:url', 1, (d) => `url('${LOOPBACK}/x', ${d.pick(['LineAsString', 'TSV'])}${d.chance(0.5) ? `, ${structure(d)}` : ''})`),
  alt('tf:s3', 1, (d) => `s3('${LOOPBACK}/bucket/key', ${d.pick(['LineAsString', 'TSV'])}${d.chance(0.5) ? `, ${structure(d)}` : ''})`),
  alt('tf:remote', 2, (d) => `${d.pick(['remote', 'remoteSecure'])}('127.0.0.1:1', '${d.terrain.other}', 'events')`),
  alt('tf:cluster', 1, (d) => `${d.pick(['cluster', 'clusterAllReplicas'])}('default', '${d.terrain.other}', 'events')`),
  alt('tf:merge', 2, (d) => `merge(${d.pick([`'${d.terrain.other}'`, "'.*'", "REGEXP('.*')", 'currentDatabase()'])}, ${d.pick(["'^events$'", "'.*'"])})`),
  alt('tf:view', 2, (d) => `view(${d.expand(select)})`, true),
  alt('tf:executable', 1, (d) => `executable('cat', 'TSV', ${structure(d)}${d.chance(0.5) ? `, (SELECT ${pathExpr(d)})` : ''})`),
  alt('tf:other-engines', 1, (d) =>
    d.pick([
      `mysql('127.0.0.1:1', 'db', 't', 'u', 'p')`,
      `postgresql('127.0.0.1:1', 'db', 't', 'u', 'p')`,
      `sqlite('${d.terrain.canaryFileFromCwd}', 't')`,
      `loop('${d.terrain.other}', 'events')`,
      `mergeTreeIndex('${d.terrain.other}', 'events')`,
      `dictionary('${d.terrain.other}.d')`,
    ]),
  ),
  alt('tf:generator', 3, (d) => d.pick([`numbers(${d.int(1, 20)})`, `numbers_mt(${d.int(1, 20)})`, `generate_series(1, ${d.int(1, 20)})`, `zeros(${d.int(1, 5)})`])),
];

// Expressions.

const expr: Alternative[] = [
  alt('expr:column', 2, (d) => d.pick(['userId', 'event', 'properties', 'type', 'timestamp', 'number', 'a', 'b'])),
  alt('expr:literal', 2, (d) => d.pick(['1', "'x'", '[1, 2]', 'NULL', '1.5', "toDate('2026-01-01')"])),
  alt('expr:benign-call', 4, (d) =>
    d.pick([
      'count()',
      'uniq(userId)',
      "JSONExtract(properties, 'k', 'UInt64')",
      'arrayMap(x -> x + 1, [1, 2])',
      'toDate(timestamp)',
      'length(event)',
      "concat(event, 'x')",
      'version()',
      'currentDatabase()',
    ]),
  ),
  alt('expr:outside', 6, (d) => d.expand(exfiltrate)),
  alt('expr:nested', 2, (d) => `${d.pick(['lower', 'upper', 'toString', 'reverse', 'trim', 'assumeNotNull'])}(${d.expand(expr)})`, true),
  alt('expr:lambda', 2, (d) => `${d.pick(['arrayMap', 'arrayFilter'])}(x -> ${d.pick(['x', 'file(toString(x))', 'toString(x) != \'\''])}, [${d.expand(expr)}])`, true),
  alt('expr:scalar-subquery', 2, (d) => `(${d.expand(select)})`, true),
  alt('expr:scalar-subquery-in-cast', 2, (d) => `CAST((SELECT any(userId) FROM ${foreignTable(d)}) AS UInt64)`),
  alt('expr:cast-type-string', 3, (d) => `CAST(${d.expand(expr)}, ${stringLiteral(d, d.expand(type))})`, true),
  alt('expr:cast-as', 1, (d) => `CAST(${d.expand(expr)} AS ${d.expand(type)})`, true),
  alt('expr:double-colon', 1, (d) => `${d.expand(expr)}::${d.expand(type)}`, true),
  alt('expr:JSONExtract-type', 3, (d) => `JSONExtract(${d.pick(['properties', "'{\"k\":1}'"])}, 'k', ${stringLiteral(d, d.expand(type))})`),
  // Deeply nested JSON for the JSON functions: a parser that recurses without a bound aborts the
  // engine (JSONMergePatch did at 60,000 levels), which the run sees as answers that never come.
  alt('expr:deep-json', 1, (d) => {
    const depth = d.pick([1_000, 60_000, 100_000]);
    const json = `concat(repeat('{"a":', ${depth}), '1', repeat('}', ${depth}))`;
    return `length(toString(${d.pick(['JSONMergePatch', 'prettyPrintJSON', 'JSONExtractKeys', 'JSONLength', 'JSONType', 'isValidJSON', 'JSONExtractRaw'])}(${json})))`;
  }),
  alt('expr:in-table', 3, (d) => `userId ${d.pick(['IN', 'NOT IN', 'GLOBAL IN'])} ${foreignTable(d)}`),
  alt('expr:in-family-function', 1, (d) => `${d.pick(['inIgnoreSet', 'notInIgnoreSet', 'globalNullIn', 'nullIn'])}(userId, ${foreignTable(d)})`),
  alt('expr:in-subquery', 1, (d) => `userId IN (SELECT userId FROM ${d.expand(tableExpr)} LIMIT 3)`, true),
  alt('expr:identifier-param', 1, (d) => (d.onClickHouse ? `userId IN ${identifierParam(d)}` : 'userId')),
];

/** On /clickhouse, `{t:Identifier}` naming the victim's table, bound by param_t. */
function identifierParam(d: Derivation): string {
  const name = d.fresh('t');
  d.params[name] = d.pick([`${d.terrain.other}.events`, `${d.terrain.meta}.webhooks`, 'system.tables', 'events']);
  d.productions.push('param:Identifier');
  return `{${name}:Identifier}`;
}

// Tables and statements.

/**
 * `production` as a row source read whole (the right side of a join): an endless one is cut to a
 * few rows, or the statement would run until its time limit.
 */
function bounded(d: Derivation, production: readonly Alternative[]): string {
  const wasEndless = d.endless;
  d.endless = false;
  const source = d.expand(production);
  const endless = d.endless;
  d.endless ||= wasEndless;
  return endless ? `(SELECT * FROM ${source} LIMIT 3)` : source;
}

const tableExpr: Alternative[] = [
  alt('from:own', 4, (d) => d.pick(['events', `${d.terrain.own}.events`, 'events_with_persons', 'persons'])),
  alt('from:foreign', 3, foreignTable),
  alt('from:table-function', 8, (d) => d.expand(tableFunction)),
  alt('from:subquery', 1, (d) => `(${d.expand(select)})`, true),
  alt('from:join', 1, (d) => {
    const join = d.pick(['JOIN', 'LEFT JOIN', 'CROSS JOIN', ',']);
    return `events AS l ${join} ${bounded(d, tableExpr)} AS r${join.endsWith('JOIN') && join !== 'CROSS JOIN' ? ' ON 1' : ''}`;
  }, true),
  alt('from:alias-shadows-database', 1, (d) => `events AS ${d.terrain.other}`),
  alt('from:identifier-param', 1, (d) => (d.onClickHouse ? identifierParam(d) : 'events')),
];

/** One item of the select list; the columns a structure defines are read by name. */
const selectItem: Alternative[] = [
  alt('item:expr', 6, (d) => d.expand(expr)),
  alt('item:star', 1, () => '*'),
  alt('item:apply', 1, (d) => `* APPLY(${d.pick(['file', 'toString', 'hex', 'x -> file(toString(x))'])})`),
  alt('item:columns-apply', 1, (d) => `COLUMNS('${d.pick(['.', 'userId', 'b'])}') APPLY(x -> ${d.pick(['file(x)', 'file(toString(x))', 'toString(x)'])})`),
  alt('item:replace', 1, (d) => `* REPLACE(${d.expand(exfiltrate)} AS event)`),
  alt('item:alias-shadows-table', 1, (d) => `1 AS \`${d.terrain.other}.events\``),
  alt('item:alias-shadows-database', 1, (d) => `${d.expand(expr)} AS ${d.terrain.other}`),
];

const settingsClause: Alternative[] = [
  alt('settings:none', 12, () => ''),
  alt('settings:clause', 2, (d) => ` SETTINGS ${d.pick(['readonly = 0', 'allow_ddl = 1', 'max_result_rows = 0', 'allow_introspection_functions = 1', "user_files_path = '/'", 'enable_analyzer = 0', 'max_execution_time = 0'])}`),
];

/** SELECT ... FROM ... with optional WITH, WHERE, LIMIT, SETTINGS, FORMAT and INTO OUTFILE. */
const select: Alternative[] = [
  alt('select', 1, (d) => {
    const outer = d.structureColumns;
    d.structureColumns = [];
    const from = d.expand(tableExpr);
    const items = Array.from({ length: d.int(1, 2) }, () => (d.structureColumns.length > 0 && d.chance(0.7) ? d.pick(d.structureColumns) : d.expand(selectItem)));
    d.structureColumns = outer;
    const cte = d.chance(0.12) ? `${d.kw('WITH')} ${d.expand(withItem)}${d.sp()}` : '';
    const where = d.chance(0.25) ? `${d.sp()}${d.kw('WHERE')} ${d.expand(expr)}` : '';
    const limit = d.endless || d.chance(0.6) ? `${d.sp()}${d.kw('LIMIT')} ${d.int(1, 3)}` : '';
    const settings = d.expand(settingsClause);
    return `${cte}${d.kw('SELECT')}${d.sp()}${items.join(', ')}${d.sp()}${d.kw('FROM')}${d.sp()}${from}${where}${limit}${settings}`;
  }),
];

const withItem: Alternative[] = [
  alt('with:cte', 2, (d) => `${d.fresh('c')} AS (${d.expand(select)})`, true),
  alt('with:expression', 2, (d) => `${d.expand(expr)} AS ${d.fresh('w')}`),
  alt('with:cte-shadows-table', 1, (d) => `\`${d.terrain.other}.events\` AS (SELECT 1)`),
  alt('with:cte-shadows-events', 1, (d) => `events AS (SELECT * FROM ${foreignTable(d)})`),
];

const tail: Alternative[] = [
  alt('tail:none', 12, () => ''),
  // POST /queries, its export and dashboards refuse every FORMAT: mostly left to /clickhouse.
  alt('tail:format', 3, (d) => (!d.onClickHouse && d.chance(0.8) ? '' : ` FORMAT ${d.pick(['TSV', 'JSONEachRow', 'CSV', 'Template', 'CapnProto', 'Protobuf', 'Native', 'Null', 'Vertical', 'JSON'])}`)),
  alt('tail:into-outfile', 2, (d) => ` INTO OUTFILE '${d.terrain.outfileDir}/${d.fresh('out')}'${d.pick(['', ' TRUNCATE', ' APPEND', " COMPRESSION 'gzip'"])}`),
];

/** Statements that are not a plain SELECT. */
const otherKind: Alternative[] = [
  alt('kind:insert-into-function', 1, (d) => `INSERT INTO FUNCTION file('${d.terrain.outfileDir}/${d.fresh('ins')}', 'TSV', 'a String') SELECT ${d.expand(exfiltrate)}`),
  alt('kind:explain', 2, (d) => `EXPLAIN ${d.pick(['', 'AST ', 'QUERY TREE ', 'SYNTAX ', 'PLAN '])}${d.expand(select)}`),
  alt('kind:describe', 2, (d) => `${d.pick(['DESCRIBE', 'DESC', 'SHOW CREATE TABLE'])} ${d.chance(0.5) ? foreignTable(d) : d.expand(tableFunction)}`),
  alt('kind:set-system-kill', 1, (d) => d.pick(['SET readonly = 0', 'SYSTEM RELOAD DICTIONARIES', 'KILL QUERY WHERE 1', `USE ${d.terrain.other}`, 'SHOW DATABASES', `SHOW TABLES FROM ${d.terrain.other}`])),
  alt('kind:create', 1, (d) => d.pick([`CREATE TEMPORARY TABLE t AS ${d.expand(select)}`, 'CREATE FUNCTION f AS x -> file(x)', `ATTACH TABLE t (a String) ENGINE = File(TSV, '${d.terrain.canaryFileFromCwd}')`])),
  alt('kind:two-statements', 1, (d) => `${d.expand(select)}; SELECT ${d.expand(exfiltrate)}`),
];

// Benign statements: the caller's own events, benign functions, constant numbers.

const benignAggregate = ['count() AS n', 'uniq(userId) AS users', "sum(JSONExtract(properties, 'k', 'UInt64')) AS total", 'max(timestamp) AS latest', 'countIf(event = \'view\') AS views'];
const benignCondition = ["event = 'view'", "JSONExtract(properties, 'k', 'UInt64') > 1", 'userId IN (SELECT userId FROM events)', 'length(userId) > 0', "type = 'track'"];

const benign: Alternative[] = [
  alt('benign:aggregate', 3, (d) => `SELECT ${d.pick(benignAggregate)}, ${d.pick(benignAggregate).replace(/ AS \w+$/, ' AS second')} FROM events${d.chance(0.5) ? ` WHERE ${d.pick(benignCondition)}` : ''}`),
  alt('benign:group-by', 2, (d) => `SELECT ${d.pick(['event', 'toDate(timestamp) AS day', 'userId'])}, count() AS n FROM events GROUP BY 1 ORDER BY n DESC LIMIT ${d.int(1, 9)}`),
  alt('benign:lambda', 1, (d) => `SELECT arrayMap(x -> x * ${d.int(2, 9)}, [1, 2, 3]) AS a, arrayFilter(x -> x > ${d.int(0, 3)}, [1, 2, 3]) AS f`),
  alt('benign:numbers', 1, (d) => `SELECT number * ${d.int(2, 9)} AS n FROM numbers(${d.int(1, 20)})`),
  alt('benign:cte', 1, (d) => `WITH e AS (SELECT userId, event FROM events WHERE ${d.pick(benignCondition)}) SELECT count() AS n FROM e`),
  alt('benign:rows', 2, (d) => `SELECT event, userId, JSONExtract(properties, 'k', 'UInt64') AS k FROM events ORDER BY timestamp LIMIT ${d.int(1, 9)}`),
];

/**
 * One hostile part in an otherwise benign statement, so that it is judged alone rather than
 * refused for a neighbour. The caller's own events hold paths (`event` = /proc/self/environ), for
 * column transformers and lambdas to read.
 */
const payload: Alternative[] = [
  alt('payload:structure-columns', 4, (d) => {
    const from = d.expand(tableFunction);
    const columns = d.structureColumns.length > 0 ? d.structureColumns.join(', ') : '*';
    return `SELECT ${columns} FROM ${from} LIMIT ${d.int(1, 3)}`;
  }),
  alt('payload:beside-aggregate', 2, (d) => `SELECT count() AS n, any(${d.expand(exfiltrate)}) AS x FROM events`),
  alt('payload:without-from', 2, (d) => `SELECT ${d.expand(exfiltrate)} AS x`),
  alt('payload:where', 1, (d) => `SELECT event FROM events WHERE ${d.expand(expr)} LIMIT 1`),
  alt('payload:column-transformer', 2, (d) => {
    const columns = d.pick(['*', "COLUMNS('event')", "COLUMNS('^ev')", 'COLUMNS(event)']);
    const applied = Array.from({ length: d.int(1, 2) }, () => `APPLY(${d.pick(['file', 'x -> file(x)', 'x -> file(toString(x))', 'x -> CAST(file(x) AS UInt64)', 'toString'])})`);
    const source = d.pick(["events WHERE event LIKE '/proc/%'", "(SELECT event FROM events WHERE startsWith(event, '/proc'))"]);
    return `SELECT ${columns} ${applied.join(' ')} FROM ${source} LIMIT 1`;
  }),
  alt('payload:lambda-over-column', 1, (d) => `SELECT arrayMap(x -> file(x), groupArray(${d.pick(['event', "JSONExtractString(properties, 'path')"])})) AS files FROM events WHERE event LIKE '/proc/%'`),
  alt('payload:table', 2, (d) => `SELECT count() AS n FROM ${d.expand(tableExpr)}`),
  alt('payload:cte', 1, (d) => `${d.kw('WITH')} ${d.expand(withItem)} SELECT count() AS n FROM events`),
];

const statement: Alternative[] = [
  alt('statement:payload', 10, (d) => `${d.expand(payload)}${d.expand(tail)}`),
  alt('statement:select', 12, (d) => `${d.expand(select)}${d.expand(tail)}`),
  alt('statement:union', 1, (d) => `${d.expand(select)} UNION ALL ${d.expand(select)}`),
  alt('statement:other-kind', 2, (d) => d.expand(otherKind)),
];

/** URL settings a /clickhouse request may carry beside its statement. */
const URL_SETTINGS: Array<[string, string]> = [
  ['readonly', '0'],
  ['max_result_rows', '0'],
  ['allow_introspection_functions', '1'],
  ['user_files_path', '/'],
  ['default_format', 'JSONEachRow'],
  ['format_template_row', '/proc/self/environ'],
];

/** The share of statements that are benign. */
const BENIGN_SHARE = 0.2;

/** Statement `index` of the run seeded `seed`, for `door`: the same three give the same statement. */
export function hostileStatement(seed: number, index: number, door: DoorName, terrain: Terrain): HostileStatement {
  const d = new Derivation(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35), terrain, door);
  const isBenign = d.chance(BENIGN_SHARE);
  const sql = d.expand(isBenign ? benign : statement);
  if (!isBenign && d.onClickHouse && d.chance(0.15)) {
    const [name, value] = d.pick(URL_SETTINGS);
    d.settings[name] = value;
    d.productions.push(`url-setting:${name}`);
  }
  return { sql, params: d.params, settings: d.settings, benign: isBenign, productions: d.productions, knowsDataDir: d.knowsDataDir };
}
