/**
 * Table engines for the two layouts. Without a cluster every table is a plain MergeTree of its
 * kind. On a cluster (CLICKHOUSE_CLUSTER) the metadata is replicated on every node of the cluster
 * (one Keeper path for all, so `{replica}` must name each node uniquely cluster-wide) and each
 * workspace's events are replicated within their shard, with a Distributed table over the shards.
 */

/** Keeper path of a table every node holds in full: the metadata. */
const ALL_NODES_PATH = "'/clickhouse/tables/all/{database}/{table}'";
/** Keeper path of a shard's part of a workspace's events: the replicas of one shard share it. */
const SHARD_EVENTS_PATH = "'/clickhouse/tables/{shard}/{database}/events_local'";

/** `engine(args)`, or on a cluster `Replicated<engine>(path, '{replica}', args)` on every node. */
export function metadataEngine(replicated: boolean, engine: string, args = ''): string {
  if (!replicated) return args ? `${engine}(${args})` : engine;
  return `Replicated${engine}(${ALL_NODES_PATH}, '{replica}'${args ? `, ${args}` : ''})`;
}

/** The engine of one shard's events table on a cluster. */
export const SHARD_EVENTS_ENGINE = `ReplicatedMergeTree(${SHARD_EVENTS_PATH}, '{replica}')`;

/**
 * Rows go to the shard of their person: the user id, or the anonymous id before one is known.
 * A person's events then sit on one shard, so per-person work (funnels, sessions, retention,
 * `GROUP BY userId`) runs on each shard alone and is merged once. An anonymous visitor who is
 * identified later has the events before it on the shard of the anonymous id.
 */
export const EVENTS_SHARDING_KEY = "cityHash64(if(userId != '', userId, anonymousId))";

/** The table that stores a workspace's events: `events` itself, or its shard tables on a cluster. */
export const eventsStorageTable = (cluster: string): string => (cluster ? 'events_local' : 'events');
