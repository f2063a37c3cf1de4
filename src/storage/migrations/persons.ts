import { identifier, identifierName, type Storage } from '../storage';
import type { Migration, MigrationTarget } from './runner';

/**
 * The tables and views that tie ids to persons (docs/api/persons.md has the rules):
 * - `person_first_links`: per id, the first link the events carry, `id → userId`: the least of
 *   (time of the event that made it, when that was parsed, userId, kind), kept by the engine as
 *   rows merge (`min` of the tuple), read with `min(first)` per id (not FINAL: an element of the
 *   tuple read under FINAL comes from any unmerged row). A shared browser stays with the first
 *   person who signed in on it. Written by the service after each load, only the links it has not
 *   stored before (a materialized view on `events` doubled the engine's cost of every insert), and
 *   derived from the events at start. `person_links` is a view of it, one row per id.
 * - `person_lookup`: the same links resolved to the end of their chains (`id → personId`), written
 *   by the service after each load; `isAlias` marks ids an `alias` call renamed, which events may
 *   carry as their `userId`.
 * - Without a cluster, two Join tables hold `person_lookup` in memory for `joinGet`, which the
 *   `events_with_persons` view calls per row: measured at 1.6× a plain `uniqExact(userId)`, where
 *   a JOIN costs 3-6×. They are filled from `person_lookup` by materialized views and rebuilt
 *   from it at every start (a Join table is not part of a backup).
 * - On a cluster, `person_first_links` and `person_lookup` are replicated on every node (their Keeper
 *   path is the metadata's), so each shard joins its events with a full local copy.
 */

/** The Join tables (no cluster) that `joinGet` reads: every resolved id, and the renamed userIds. */
export const LOOKUP_TABLES = { anonymous: 'person_lookup_anonymous', alias: 'person_lookup_alias' } as const;

/** The table of each id's first link (its column `first`: linkedAt, parsedAt, userId, kind). */
export const FIRST_LINKS = 'person_first_links';

/**
 * The first link of each id the events of `events` (a table or view of events) carry, as
 * `person_first_links` rows; only of the events `where` (SQL) selects when given. An event links its
 * anonymousId to its userId, an alias its previousId.
 */
export const derivedFirstLinks = (events: string, where?: string) => `SELECT link.1 AS id, min((ts, p, link.2, link.3)) AS first
  FROM (
    SELECT arrayJoin(arrayFilter(l -> l.1 != '' AND l.1 != l.2, [
        (anonymousId, userId, 'identify'),
        (if(type = 'alias', JSONExtractString(properties, 'previousId'), ''), userId, 'alias')
      ])) AS link, timestamp AS ts, parsedAt AS p
    FROM ${events}
    WHERE userId != '' AND (anonymousId != '' OR type = 'alias')${where ? ` AND (${where})` : ''}
  )
  GROUP BY id`;

/** The person of a row's `userId` and `anonymousId` without a cluster: through the Join tables. */
export function personOfIds(dbName: string): string {
  const get = (table: string, key: string) => `ifNull(joinGetOrNull('${dbName}.${table}', 'personId', ${key}), ${key})`;
  return `if(userId != '', ${get(LOOKUP_TABLES.alias, 'userId')}, ${get(LOOKUP_TABLES.anonymous, 'anonymousId')})`;
}

/** The view of events with their personId, by its name. */
export const PERSON_ID_VIEW = 'events_with_persons';

/**
 * The view of events with their personId. `hidden`, when given, lists the view's columns: every
 * column of the events table with its type, its MATERIALIZED columns declared so (so that
 * `SELECT *` leaves them out, as it does on the table) and personId last; `reads` names those
 * columns for its SELECT, and `view` the view made, which then takes the place of the one in use
 * (replacePersonIdView).
 */
export function personIdView(target: MigrationTarget, hidden?: { columns: string; reads: readonly string[]; view: string }): string {
  const { db, dbName, onCluster, cluster } = target;
  const name = `${db}.${hidden ? identifier(hidden.view) : PERSON_ID_VIEW}${cluster ? ` ${onCluster}` : ''}`;
  const create = hidden ? `CREATE OR REPLACE VIEW ${name} (${hidden.columns})` : `CREATE VIEW IF NOT EXISTS ${name}`;
  const reads = (qualifier: string) => (hidden ?? { reads: [] }).reads.map((name) => `${qualifier}${name}, `).join('');
  if (!cluster) {
    return `${create} AS
      SELECT *, ${reads('')}${personOfIds(dbName)} AS personId
      FROM ${db}.events`;
  }
  return `${create} AS
    SELECT e.*, ${reads('e.')}if(e.userId != '', if(a.personId != '', a.personId, e.userId), if(l.personId != '', l.personId, e.anonymousId)) AS personId
    FROM ${db}.events AS e
    LEFT ANY JOIN (SELECT id, personId FROM ${db}.person_lookup FINAL WHERE isAlias) AS a ON a.id = e.userId
    LEFT ANY JOIN (SELECT id, personId FROM ${db}.person_lookup FINAL) AS l ON l.id = e.anonymousId`;
}

/**
 * Replaces `events_with_persons` with one whose columns include every MATERIALIZED column of the
 * events table (the web-analytics columns, those storing property reads), hidden as they are on
 * the table. The workspace store does it after the migrations, and src/properties/read-columns.ts
 * after adding a column. The new view is made under a name of its own and exchanged with the one
 * in use, which is then dropped: `CREATE OR REPLACE VIEW` drops the view before it creates it again
 * in a database that is not Atomic (chDB's `default`, measured: 119 of 234 reads meanwhile found
 * no view), where EXCHANGE TABLES swaps the two at once in both (no read failed). The name is new
 * each time, so that two processes replacing the view at once never exchange each other's.
 */
export async function replacePersonIdView(storage: Storage, target: MigrationTarget): Promise<void> {
  const rows = await storage.query(
    `SELECT name, type, default_kind AS kind, default_expression AS expression FROM system.columns
     WHERE database = {database:String} AND table = 'events' AND default_kind IN ('', 'MATERIALIZED') ORDER BY position`,
    { database: target.dbName },
  );
  const hidden = rows.filter((r) => r.kind === 'MATERIALIZED');
  const columns = [
    ...rows.filter((r) => r.kind === '').map((r) => `${identifier(String(r.name))} ${r.type}`),
    ...hidden.map((r) => `${identifier(String(r.name))} ${r.type} MATERIALIZED ${r.expression}`),
    'personId String',
  ];
  const on = target.onCluster ? ` ${target.onCluster}` : '';
  const next = `${PERSON_ID_VIEW}_${crypto.randomUUID().replaceAll('-', '')}`;
  await storage.command(personIdView(target, { columns: columns.join(', '), reads: hidden.map((r) => identifierName(String(r.name))), view: next }));
  try {
    await storage.command(`EXCHANGE TABLES ${target.db}.${PERSON_ID_VIEW} AND ${target.db}.${identifier(next)}${on}`);
  } finally {
    await storage.command(`DROP VIEW IF EXISTS ${target.db}.${identifier(next)}${on}`);
  }
}

/**
 * Latest traits per key, as a JSON object's text: the values of the newest event (by timestamp,
 * then arrival) that set each key, keys in order. `kind` is the type of event that sets them.
 */
const latestTraits = (db: string, key: string, kind: string) => `SELECT ${key}, concat('{', arrayStringConcat(arraySort(groupArray(concat(toJSONString(k), ':', v))), ','), '}') AS traits
  FROM (
    SELECT ${key}, kv.1 AS k, argMax(kv.2, (timestamp, parsedAt)) AS v
    FROM ${db}.events_with_persons ARRAY JOIN JSONExtractKeysAndValuesRaw(traits) AS kv
    WHERE type = '${kind}' AND ${key} != ''
    GROUP BY ${key}, k
  )
  GROUP BY ${key}`;

function personsView({ db, onCluster }: MigrationTarget): string {
  return `CREATE VIEW IF NOT EXISTS ${db}.persons ${onCluster} AS
    SELECT s.personId AS personId, if(s.identified, s.personId, '') AS userId, s.userIds AS userIds, s.anonymousIds AS anonymousIds,
      if(t.traits = '', '{}', t.traits) AS traits, s.firstSeen AS firstSeen, s.lastSeen AS lastSeen, s.eventCount AS eventCount
    FROM (
      SELECT personId, countIf(userId != '') > 0 AS identified,
        arraySort(groupUniqArrayIf(userId, userId != '')) AS userIds,
        arraySort(groupUniqArrayIf(anonymousId, anonymousId != '')) AS anonymousIds,
        min(timestamp) AS firstSeen, max(timestamp) AS lastSeen, count() AS eventCount
      FROM ${db}.events_with_persons WHERE personId != '' GROUP BY personId
    ) AS s
    LEFT JOIN (${latestTraits(db, 'personId', 'identify')}) AS t ON t.personId = s.personId`;
}

function groupsView({ db, onCluster }: MigrationTarget): string {
  return `CREATE VIEW IF NOT EXISTS ${db}.groups ${onCluster} AS
    SELECT s.groupId AS groupId, if(t.traits = '', '{}', t.traits) AS traits, s.firstSeen AS firstSeen, s.lastSeen AS lastSeen,
      s.eventCount AS eventCount, s.personCount AS personCount
    FROM (
      SELECT groupId, min(timestamp) AS firstSeen, max(timestamp) AS lastSeen, count() AS eventCount, uniqExactIf(personId, personId != '') AS personCount
      FROM ${db}.events_with_persons WHERE groupId != '' GROUP BY groupId
    ) AS s
    LEFT JOIN (${latestTraits(db, 'groupId', 'group')}) AS t ON t.groupId = s.groupId`;
}

/**
 * Links kept by their first (a shared browser stays with the first person signed in on it) where
 * `person_links` kept the latest: every link is derived again from the events, the old table gives
 * way to a view of the new one, and the start after it resolves every id again (`rebuild`), so
 * existing data follows the rule. Run again after a stop, each statement does the same (`min`).
 */
function firstLinksMigration(target: MigrationTarget): string[] {
  const { db, onCluster, cluster, engine } = target;
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.${FIRST_LINKS} ${onCluster} (
      id String,
      first SimpleAggregateFunction(min, Tuple(linkedAt DateTime64(6, 'UTC'), parsedAt DateTime64(6, 'UTC'), userId String, kind String))
    ) ENGINE = ${cluster ? engine('AggregatingMergeTree') : 'AggregatingMergeTree'} ORDER BY id`,
    `INSERT INTO ${db}.${FIRST_LINKS} (id, first) ${derivedFirstLinks(`${db}.events`)}`,
    `DROP TABLE IF EXISTS ${db}.person_links ${onCluster} SYNC`,
    `CREATE OR REPLACE VIEW ${db}.person_links ${onCluster} AS
      SELECT id, f.userId AS userId, f.kind AS kind, f.linkedAt AS linkedAt, f.parsedAt AS parsedAt
      FROM (SELECT id, min(first) AS f FROM ${db}.${FIRST_LINKS} GROUP BY id)`,
  ];
}

export const personMigrations: Migration[] = [
  {
    version: 5,
    name: 'person_links',
    statements: (target) => {
      const { db, onCluster, cluster, engine } = target;
      return [
        `CREATE TABLE IF NOT EXISTS ${db}.person_links ${onCluster} (
          id String,
          userId String,
          kind LowCardinality(String),
          linkedAt DateTime64(6, 'UTC'),
          parsedAt DateTime64(6, 'UTC')
        ) ENGINE = ${cluster ? engine('ReplacingMergeTree', 'linkedAt') : 'ReplacingMergeTree(linkedAt)'} ORDER BY id`,
        `CREATE TABLE IF NOT EXISTS ${db}.person_lookup ${onCluster} (
          id String,
          personId String,
          isAlias Bool,
          version UInt64
        ) ENGINE = ${cluster ? engine('ReplacingMergeTree', 'version') : 'ReplacingMergeTree(version)'} ORDER BY id`,
        ...(cluster
          ? []
          : [
              `CREATE TABLE IF NOT EXISTS ${db}.${LOOKUP_TABLES.anonymous} (id String, personId String) ENGINE = Join(ANY, LEFT, id) SETTINGS join_any_take_last_row = 1`,
              `CREATE TABLE IF NOT EXISTS ${db}.${LOOKUP_TABLES.alias} (id String, personId String) ENGINE = Join(ANY, LEFT, id) SETTINGS join_any_take_last_row = 1`,
              `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${LOOKUP_TABLES.anonymous}_mv TO ${db}.${LOOKUP_TABLES.anonymous} AS SELECT id, personId FROM ${db}.person_lookup`,
              `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${LOOKUP_TABLES.alias}_mv TO ${db}.${LOOKUP_TABLES.alias} AS SELECT id, personId FROM ${db}.person_lookup WHERE isAlias`,
            ]),
        personIdView(target),
        personsView(target),
        groupsView(target),
      ];
    },
  },
];

/** After the visits' migration (6): the ledger lists migrations in version order. */
export const personFirstLinksMigration: Migration = { version: 8, name: 'person_first_links', statements: firstLinksMigration };
