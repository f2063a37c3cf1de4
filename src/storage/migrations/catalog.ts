import type { Migration } from './runner';
import { MAX_EXAMPLES } from '../../catalog/observations';

/**
 * The event catalog of a workspace (docs/governance.md#the-catalog): `catalog` holds what its
 * events showed, a row per (kind, event, path, type, day, library) with counts, first and last
 * seen and a few examples, summed at merges (read it with GROUP BY). The loader adds the rows of
 * each batch it stores (src/catalog/catalog-recorder.ts): measured cheaper than a materialized
 * view (docs/architecture.md#the-event-catalog). `catalog_progress` says how far the events
 * stored before the catalog existed have been added: up to `historyThrough` (arrival time) of the
 * events that arrived up to `historyEnd`, the newest arrival stored when the table was made; the
 * loader adds every event loaded after (replayed ones too, which arrived after it: the ingest
 * log loads in arrival order). On a cluster both tables are whole on every node, as the metadata.
 */
export const catalogMigrations: Migration[] = [
  {
    version: 9,
    name: 'catalog',
    statements: ({ db, onCluster, cluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.catalog ${onCluster} (
        kind LowCardinality(String),
        event String,
        path String,
        type LowCardinality(String),
        day Date,
        library LowCardinality(String),
        events SimpleAggregateFunction(sum, UInt64),
        firstSeen SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
        lastSeen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
        examples SimpleAggregateFunction(groupUniqArrayArray(${MAX_EXAMPLES}), Array(String))
      ) ENGINE = ${engine('AggregatingMergeTree')} ORDER BY (kind, event, path, type, day, library)
      SETTINGS ${cluster ? 'replicated_deduplication_window' : 'non_replicated_deduplication_window'} = 1000`,
      `CREATE TABLE IF NOT EXISTS ${db}.catalog_progress ${onCluster} (historyThrough DateTime64(6, 'UTC'), historyEnd DateTime64(6, 'UTC'), version UInt64)
        ENGINE = ${cluster ? engine('ReplacingMergeTree', 'version') : 'ReplacingMergeTree(version)'} ORDER BY tuple()`,
      // Made with the table, before this start's loader runs: later events are the loader's.
      `INSERT INTO ${db}.catalog_progress SELECT toDateTime64(0, 6, 'UTC'), ifNull(max(parsedAt), toDateTime64(0, 6, 'UTC')), 0 FROM ${db}.events`,
    ],
  },
];
