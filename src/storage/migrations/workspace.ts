import type { Migration } from './runner';

/** Each workspace database: the `events` table, columns named as in the API. */
export const workspaceMigrations: Migration[] = [
  {
    version: 1,
    name: 'events',
    // Sorted by time first: the default listing and most analytics scan recent time ranges.
    // No partition key, so one insert is one part and a batch is stored all or nothing.
    // Bloom filters let point filters on ids and names skip granules.
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.events ${onCluster} (
        uuid UUID,
        type LowCardinality(String),
        event String,
        userId String,
        anonymousId String,
        groupId String,
        instanceId String,
        properties String,
        traits String,
        context String,
        timestamp DateTime64(6, 'UTC'),
        parsedAt DateTime64(6, 'UTC'),
        INDEX idx_uuid uuid TYPE bloom_filter GRANULARITY 1,
        INDEX idx_user_id userId TYPE bloom_filter GRANULARITY 1,
        INDEX idx_anonymous_id anonymousId TYPE bloom_filter GRANULARITY 1,
        INDEX idx_event event TYPE bloom_filter GRANULARITY 1
      ) ENGINE = MergeTree ORDER BY (timestamp, uuid)`,
    ],
  },
  {
    version: 2,
    name: 'events_parsed_at_index',
    // Webhook delivery reads events after a point in acceptance order. parsedAt follows insert
    // order, so each part spans a narrow range and a minmax index skips all but the newest.
    statements: ({ db, onCluster }) => [
      `ALTER TABLE ${db}.events ${onCluster} ADD INDEX IF NOT EXISTS idx_parsed_at parsedAt TYPE minmax GRANULARITY 1`,
    ],
  },
  {
    version: 3,
    name: 'events_insert_deduplication',
    // An insert whose answer was lost (timeout, dropped connection) is repeated with the same
    // token until it is known to be stored; the table remembers the tokens of its last inserts.
    statements: ({ db, onCluster }) => [`ALTER TABLE ${db}.events ${onCluster} MODIFY SETTING non_replicated_deduplication_window = 1000`],
  },
  {
    version: 4,
    name: 'events_message_id',
    // The client's messageId, by which repeats are recognised; the bloom filter serves the
    // look-ups of de-duplication beyond what the service remembers, and filters by it.
    statements: ({ db, onCluster }) => [
      `ALTER TABLE ${db}.events ${onCluster} ADD COLUMN IF NOT EXISTS messageId String AFTER type`,
      `ALTER TABLE ${db}.events ${onCluster} ADD INDEX IF NOT EXISTS idx_message_id messageId TYPE bloom_filter GRANULARITY 1`,
    ],
  },
];
