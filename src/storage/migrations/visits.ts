import { eventsStorageTable } from './engines';
import { personOfIds } from './persons';
import type { Migration, MigrationTarget } from './runner';

/**
 * Stored visits (docs/architecture.md#web-analytics-visits): one row per visit of a device (the
 * visit key: an event's anonymousId, else its userId), kept as events arrive by the visit builder
 * (src/web-analytics/visits). A rebuilt visit is cancelled by a copy of its row with `sign` -1, as
 * Plausible's `sessions_v2` does, so every read sums `sign`; merges drop the cancelled pairs. The
 * row keeps the ids of the visit's first event, whose person (resolved when read, in
 * `visits_with_persons`) is the visit's visitor: a link made later moves the visit with no rebuild.
 */

/** An event's visit key: its device, the anonymous id an SDK keeps across sign-in, else the user id. */
export const VISIT_KEY = "if(anonymousId != '', anonymousId, userId)";

/**
 * How long a visit may last, at most, for finding it by its end: reads look for visits that end in
 * a range among those starting this long before it, so that the table's order (by start) skips
 * older ones (Plausible's queries bound their sessions so too).
 */
export const LONGEST_VISIT_DAYS = 7;

/** The attribute columns of a visit, as sessions.ts names them: taken from its first event. */
export const VISIT_ATTRIBUTE_COLUMNS = ['source', 'referrer', 'utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm', 'country', 'region', 'city', 'browser', 'os', 'device'] as const;
const LOW_CARDINALITY = new Set(['country', 'browser', 'os', 'device', 'utmMedium']);

/** Every column of `visits`, in order, with its type. */
export const VISIT_TABLE_COLUMNS: ReadonlyArray<[string, string]> = [
  ['visitKey', 'String'],
  ['userId', 'String'],
  ['anonymousId', 'String'],
  ['start', "DateTime64(6, 'UTC')"],
  ['end', "DateTime64(6, 'UTC')"],
  ['pageviews', 'UInt32'],
  ['events', 'UInt32'],
  ['bounce', 'UInt8'],
  ['entryPage', 'String'],
  ['exitPage', 'String'],
  ...VISIT_ATTRIBUTE_COLUMNS.map((name): [string, string] => [name, LOW_CARDINALITY.has(name) ? 'LowCardinality(String)' : 'String']),
  ['sign', 'Int8'],
];

/**
 * Whether an event makes visits (docs/web-analytics.md#visits), stored with each event in the
 * MATERIALIZED column `visitEvent`: the engine computes it as the event is inserted, and every
 * read of visits and of the overview's events tests one Boolean column instead of seven reads of
 * the events' columns and JSON (a third of the goals' time and a fifth of the top pages').
 * Page views and custom events, but not the `engagement` reports of Plausible's tracker (time on
 * page, scroll depth), which Plausible's own queries leave out as no act of the visitor sends
 * them; not those of automated clients (`context.bot`, src/events/bots.ts); and only those sent
 * from a browser: with a page (`context.page.path` or `.url`, a page's `properties.path` or
 * `.url`) or a browser's user agent (`context.browser`, which the enrichment names from it). A
 * backend's call (a server SDK's `track` of an upgrade) has neither, and belongs to no visit.
 * The text is this migration's, fixed: a new definition is a new migration (MODIFY COLUMN, then
 * MATERIALIZE COLUMN) and a new VISIT_DEFINITION.
 */
const VISIT_EVENT_EXPRESSION = `(type = 'page' OR (type = 'track' AND event != 'engagement')) AND NOT JSONExtractBool(context, 'bot')
  AND (JSONExtractString(context, 'page', 'path') != '' OR JSONExtractString(properties, 'path') != ''
    OR JSONExtractString(context, 'page', 'url') != '' OR JSONExtractString(properties, 'url') != ''
    OR JSONExtractString(context, 'browser', 'name') != '')`;

/** The path of an event's page: `context.page.path` (Segment SDKs, our tracker, Plausible's events), else `properties.path`. */
const PAGE_PATH_EXPRESSION = `if(JSONExtractString(context, 'page', 'path') != '', JSONExtractString(context, 'page', 'path'), JSONExtractString(properties, 'path'))`;

/** The events' column that says whether an event makes visits (VISIT_EVENT_EXPRESSION). */
export const VISIT_EVENT_COLUMN = 'visitEvent';
/** The events' column of the path of an event's page, '' for none (PAGE_PATH_EXPRESSION). */
export const PAGE_PATH_COLUMN = 'pagePath';
/** The events' columns the engine computes as events are inserted, for web analytics. */
export const WEB_EVENT_COLUMNS: readonly string[] = [VISIT_EVENT_COLUMN, PAGE_PATH_COLUMN];

/** The table that stores a workspace's visits: `visits`, or its shard tables on a cluster. */
export const visitsStorageTable = (cluster: string): string => (cluster ? 'visits_local' : 'visits');

function visitsWithPersons({ db, dbName, onCluster, cluster }: MigrationTarget): string {
  if (!cluster) return `CREATE VIEW IF NOT EXISTS ${db}.visits_with_persons AS SELECT *, ${personOfIds(dbName)} AS personId FROM ${db}.visits`;
  return `CREATE VIEW IF NOT EXISTS ${db}.visits_with_persons ${onCluster} AS
    SELECT v.*, if(v.userId != '', if(a.personId != '', a.personId, v.userId), if(l.personId != '', l.personId, v.anonymousId)) AS personId
    FROM ${db}.visits AS v
    LEFT ANY JOIN (SELECT id, personId FROM ${db}.person_lookup FINAL WHERE isAlias) AS a ON a.id = v.userId
    LEFT ANY JOIN (SELECT id, personId FROM ${db}.person_lookup FINAL) AS l ON l.id = v.anonymousId`;
}

export const visitMigrations: Migration[] = [
  {
    version: 6,
    name: 'visits',
    statements: (target) => {
      const { db, dbName, onCluster, cluster, engine } = target;
      const columns = `(${VISIT_TABLE_COLUMNS.map(([name, type]) => `\`${name}\` ${type}`).join(', ')})`;
      // A day's visits of one device sit together: the overview reads ranges of days.
      const order = 'ORDER BY (toDate(start), visitKey, start)';
      const tables = cluster
        ? [
            `CREATE TABLE IF NOT EXISTS ${db}.visits_local ${onCluster} ${columns} ENGINE = ReplicatedCollapsingMergeTree('/clickhouse/tables/{shard}/{database}/visits_local', '{replica}', sign) ${order}`,
            `CREATE TABLE IF NOT EXISTS ${db}.visits ${onCluster} AS ${db}.visits_local ENGINE = Distributed('${cluster}', '${dbName}', 'visits_local', cityHash64(visitKey))`,
          ]
        : [`CREATE TABLE IF NOT EXISTS ${db}.visits ${columns} ENGINE = CollapsingMergeTree(sign) ${order}`];
      return [
        ...tables,
        // How far the builder has come: the arrival time (parsedAt) of the last event built; while
        // the history is built (not complete), the arrival time of the last event of the history and
        // the time (timestamp) up to which it is built; and the session timeout the visits were cut
        // with (another one builds them all again).
        `CREATE TABLE IF NOT EXISTS ${db}.visit_progress ${onCluster} (builtThrough DateTime64(6, 'UTC'), complete Bool, historyThrough DateTime64(6, 'UTC'), timeoutMinutes UInt32, version UInt64)
          ENGINE = ${cluster ? engine('ReplacingMergeTree', 'version') : 'ReplacingMergeTree(version)'} ORDER BY tuple()`,
        visitsWithPersons(target),
      ];
    },
  },
  {
    version: 7,
    name: 'visit_definition',
    // The visit definition the visits were built with (src/web-analytics/visits/visit-definition.ts):
    // another one builds them all again, as another timeout does. 0: the rows written before it.
    statements: ({ db, onCluster }) => [`ALTER TABLE ${db}.visit_progress ${onCluster} ADD COLUMN IF NOT EXISTS definition UInt32 DEFAULT 0`],
  },
];

/**
 * A migration adding to the events the column `name`, `type MATERIALIZED expression`: the engine
 * computes it as each event is inserted. The events stored before it are filled in the background
 * (a mutation the engine resumes after a restart, its progress in the log: materialization-log.ts);
 * until then their parts compute it from the expression when read. events_with_persons shows it,
 * hidden, once the workspace store replaces the view after the migrations (replacePersonIdView).
 */
function storedEventColumn(version: number, migration: string, name: string, type: string, expression: string): Migration {
  return {
    version,
    name: migration,
    statements: ({ db, onCluster, cluster }) => {
      const stored = `${db}.${eventsStorageTable(cluster)} ${onCluster}`;
      const column = `ADD COLUMN IF NOT EXISTS ${name} ${type} MATERIALIZED ${expression}`;
      return [
        `ALTER TABLE ${stored} ${column}`,
        // The Distributed table needs the column too, to send reads of it to the shards.
        ...(cluster ? [`ALTER TABLE ${db}.events ${onCluster} ${column}`] : []),
        `ALTER TABLE ${stored} MATERIALIZE COLUMN ${name} SETTINGS mutations_sync = 0`,
      ];
    },
  };
}

/** The web-analytics columns of the events: whether each makes visits, and its page's path. */
export const webEventMigrations: Migration[] = [
  storedEventColumn(11, 'events_visit_event', VISIT_EVENT_COLUMN, 'Bool', VISIT_EVENT_EXPRESSION),
  storedEventColumn(12, 'events_page_path', PAGE_PATH_COLUMN, 'String', PAGE_PATH_EXPRESSION),
];
