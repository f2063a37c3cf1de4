/**
 * A seeded generator of statements aimed at tables outside the caller's workspace: every
 * database of the engine, in every spelling, from every clause and position where a name can
 * reach a table, behind aliases, CTEs, lambda parameters and ARRAY JOIN names that spell the
 * target. The same shapes aimed at the caller's own tables come out too, so the corpus shows
 * what runs as well as what is refused.
 */

import { seededRandom } from '../helpers/seeded-random';

export interface Target {
  database: string;
  table: string;
}

export interface CorpusStatement {
  sql: string;
  /** Aimed at the caller's own tables (expected to run) or at another database's. */
  aim: 'own' | 'foreign';
}

const IN_FAMILY = ['in', 'notIn', 'globalIn', 'globalNotIn', 'nullIn', 'notNullIn', 'globalNullIn', 'globalNotNullIn', 'inIgnoreSet', 'notInIgnoreSet'];

/** How a table can be written: `{db}` and `{t}` are filled in. */
const SPELLINGS = ['{db}.{t}', '`{db}`.`{t}`', '"{db}"."{t}"', '{db} . {t}', '`{db}`.{t}', '{db}.`{t}`'];

/**
 * Statements with a table reference `{T}`; `{RAW}` is the target as plain text (for aliases and
 * CTE names that spell it), `{DB}` its database alone, `{DBSTR}` and `{TSTR}` as string literals.
 */
const SHAPES = [
  'SELECT * FROM {T}',
  'SELECT count() AS n FROM {T}',
  'SELECT any(userId) AS u FROM {T}',
  'SELECT count() AS n FROM events WHERE userId IN {T}',
  'SELECT count() AS n FROM events WHERE userId NOT IN {T}',
  'SELECT count() AS n FROM events WHERE (userId, event) IN {T}',
  'SELECT count() AS n FROM events WHERE userId GLOBAL IN {T}',
  'SELECT count() AS n FROM events WHERE userId IN (SELECT userId FROM {T})',
  'SELECT (SELECT count() FROM {T}) AS n',
  'SELECT CAST((SELECT any(userId) FROM {T}) AS UInt64) AS n',
  "SELECT toDate((SELECT any(event) FROM {T})) AS d",
  'SELECT count() AS n FROM events AS e JOIN {T} AS f ON e.userId = f.userId',
  'SELECT count() AS n FROM events AS e LEFT JOIN {T} AS f USING (userId)',
  'SELECT count() AS n FROM events, {T}',
  'SELECT count() AS n FROM events CROSS JOIN {T}',
  'SELECT userId FROM events UNION ALL SELECT userId FROM {T}',
  'SELECT userId FROM events UNION DISTINCT SELECT userId FROM {T}',
  'SELECT userId FROM events INTERSECT SELECT userId FROM {T}',
  'SELECT userId FROM events EXCEPT SELECT userId FROM {T}',
  'WITH x AS (SELECT * FROM {T}) SELECT count() AS n FROM x',
  'WITH x AS (SELECT * FROM {T}), y AS (SELECT * FROM x) SELECT count() AS n FROM y',
  'WITH (SELECT count() FROM {T}) AS c SELECT c',
  'SELECT count() AS n FROM events WHERE EXISTS (SELECT 1 FROM {T})',
  'SELECT userId, count() AS n FROM events GROUP BY userId HAVING count() > (SELECT count() FROM {T})',
  'SELECT userId FROM events ORDER BY (SELECT count() FROM {T})',
  'SELECT userId FROM events LIMIT (SELECT count() FROM {T})',
  'SELECT userId FROM events GROUP BY userId, (SELECT count() FROM {T})',
  'SELECT arrayMap(x -> x IN {T}, [userId]) AS a FROM events',
  'SELECT arrayFilter(x -> x IN (SELECT userId FROM {T}), [userId]) AS a FROM events',
  'SELECT count() OVER (PARTITION BY userId IN {T}) AS n FROM events',
  'SELECT userId FROM events QUALIFY userId IN {T}',
  'SELECT count() AS n FROM events ARRAY JOIN [1, 2] AS a WHERE userId IN {T}',
  'SELECT count() AS n FROM (SELECT * FROM (SELECT * FROM {T}))',
  'SELECT count() AS n FROM events WHERE userId = ANY (SELECT userId FROM {T})',
  'SELECT count() AS n FROM events WHERE userId IN (SELECT userId FROM events WHERE userId IN {T})',
  'SELECT if(userId IN {T}, 1, 0) AS f FROM events',
  'SELECT multiIf(userId IN {T}, 1, 2) AS f FROM events',
  'SELECT count() AS n FROM events PREWHERE userId IN {T}',
  'SELECT count() AS n FROM events WHERE userId IN {T} SETTINGS transform_null_in = 1',
  'SELECT * FROM view(SELECT * FROM {T})',
  "SELECT * FROM merge({DBSTR}, {TSTR})",
  "SELECT * FROM remote('127.0.0.1', {DBSTR}, {TSTR})",
  "SELECT * FROM cluster('default', {DBSTR}, {TSTR})",
  "SELECT dictGet({DBSTR} || '.' || {TSTR}, 'userId', toUInt64(1)) AS d",
  "SELECT joinGet({DBSTR} || '.' || {TSTR}, 'userId', 1) AS d",
  "SELECT hasColumnInTable({DBSTR}, {TSTR}, 'userId') AS h",
  'SELECT count() AS n FROM numbers(10) WHERE toString(number) IN {T}',
  'SELECT count() AS n FROM events WHERE {FN}(userId, {T})',
];

/** Ways a statement can make the target's name look like one of its own. */
const DISGUISES = [
  (sql: string) => sql,
  (sql: string) => sql.replace('SELECT ', 'SELECT 1 AS `{RAW}`, '),
  (sql: string) => sql.replace('SELECT ', 'SELECT 1 AS {DB}, '),
  (sql: string) => (sql.startsWith('WITH ') ? sql.replace(/^WITH /, 'WITH 1 AS {DB}, ') : `WITH 1 AS {DB} ${sql}`),
  (sql: string) => `WITH {DB} AS (SELECT 1) ${sql}`,
  (sql: string) => `WITH \`{RAW}\` AS (SELECT 1) ${sql}`,
  (sql: string) => sql.replace(' FROM events', ' FROM events AS {DB}'),
  (sql: string) => sql.replace(' FROM events', ' FROM events ARRAY JOIN [1] AS {DB}'),
  (sql: string) => sql.replace('SELECT ', 'SELECT arrayMap({DB} -> {DB}, [1]) AS lam, '),
  (sql: string) => sql.replaceAll('SELECT ', 'sElEcT ').replaceAll(' FROM ', ' from '),
];

/** A string literal of `text` (database and table names hold no quote or backslash). */
const literal = (text: string) => `'${text}'`;

function fill(template: string, target: Target, spelling: string, fn: string): string {
  const ref = spelling.replaceAll('{db}', target.database).replaceAll('{t}', target.table);
  return template
    .replaceAll('{T}', ref)
    .replaceAll('{RAW}', `${target.database}.${target.table}`)
    .replaceAll('{DBSTR}', literal(target.database))
    .replaceAll('{TSTR}', literal(target.table))
    .replaceAll('{DB}', target.database)
    .replaceAll('{FN}', fn);
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/**
 * `count` distinct statements: about one in ten aimed at `own` (the caller's `events`, qualified
 * or not), the rest at the `foreign` targets.
 */
export function generateCorpus(seed: number, count: number, own: string, foreign: readonly Target[]): CorpusStatement[] {
  const random = seededRandom(seed);
  const seen = new Set<string>();
  const corpus: CorpusStatement[] = [];
  for (let tries = 0; corpus.length < count && tries < count * 50; tries++) {
    const aim = random() < 0.1 ? 'own' : 'foreign';
    const target = aim === 'own' ? { database: own, table: 'events' } : pick(random, foreign);
    const spelling = aim === 'own' && random() < 0.5 ? '{t}' : pick(random, SPELLINGS);
    const disguise = pick(random, DISGUISES);
    const sql = fill(disguise(pick(random, SHAPES)), target, spelling, pick(random, IN_FAMILY));
    if (seen.has(sql)) continue;
    seen.add(sql);
    corpus.push({ sql, aim });
  }
  return corpus;
}
