/**
 * The statements the service issues with CLICKHOUSE_CLUSTER set, collected by starting the real
 * service on a storage that records them (no cluster runs here), checked against the cluster
 * layout and parsed by the engine's own parser (chDB's formatQuery, and EXPLAIN AST for the DDL).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Session } from 'chdb';
import { buildConfig, readEnvFile } from '../../src/config';
import { silentLogger } from '../../src/log';
import { clusterInsertSettings } from '../../src/storage/open';
import { startService } from '../../src/service';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { ReadColumns } from '../../src/properties/read-columns';
import { applyRetention } from '../../src/workspaces/retention';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { PROJECT_ROOT } from '../helpers/project-root';
import { RecordingStorage, type Issued } from '../helpers/recording-storage';

const CLUSTER = 'analytics_cluster';
const META = 'analytics_meta';
const DEFAULT_DB = 'default_ws';

let issued: Issued[];
let ddl: string[];
let engine: Session;

beforeAll(async () => {
  const storage = new RecordingStorage();
  const config = buildConfig(readEnvFile(join(PROJECT_ROOT, '.env.defaults')), {
    PORT: '0',
    HOST: '127.0.0.1',
    // The ingest log lives in DATA_DIR: a directory of this test's own, not the default ./data
    // that `npm start` may be using in the same checkout.
    DATA_DIR: join(ENGINE_DIR, uniqueName('cluster-ddl')),
    CLICKHOUSE_URL: 'http://clickhouse.invalid:8123',
    CLICKHOUSE_CLUSTER: CLUSTER,
    META_DATABASE: META,
    DEFAULT_WORKSPACE_DATABASE: DEFAULT_DB,
    PUBLIC_API_KEYS: 'public-cluster-key',
    PRIVATE_API_KEYS: 'private-cluster-key',
  });
  const svc = await startService(config, silentLogger, storage);
  await svc.stop();
  // What a workspace's later life issues: a retention period, and its deletion.
  const migrations = new MigrationRunner(storage, META, CLUSTER, silentLogger);
  await applyRetention(migrations, DEFAULT_DB, 30, true);
  await migrations.dropDatabase('deleted_ws');
  await new ReadColumns(storage, { cluster: CLUSTER, maxColumns: 12, refreshMs: 0 }, silentLogger).add(DEFAULT_DB, "JSONExtract(properties, 'plan', 'String')", 'String');
  issued = storage.issued;
  ddl = issued.map((s) => s.sql).filter((sql) => /^\s*(CREATE|ALTER|DROP|EXCHANGE)\b/.test(sql));
  expect(ddl.some((s) => /MODIFY TTL timestamp \+ INTERVAL 30 DAY/.test(s) && s.includes('events_local'))).toBe(true);
  expect(ddl.some((s) => /^DROP DATABASE IF EXISTS `deleted_ws` ON CLUSTER/.test(s))).toBe(true);
  console.log(`statements issued at start with CLICKHOUSE_CLUSTER=${CLUSTER} (DDL first):\n\n${[...ddl, ...issued.map((s) => s.sql).filter((s) => !ddl.includes(s))].map((s) => s.replace(/\s+/g, ' ').trim() + ';').join('\n')}\n`);
  engine = new Session(ENGINE_DIR);
});

afterAll(() => engine?.close());

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();

describe('the DDL on a cluster', () => {
  test('every DDL statement runs ON CLUSTER, and is idempotent', () => {
    expect(ddl.length).toBeGreaterThan(10);
    for (const sql of ddl) {
      expect(sql).toContain(`ON CLUSTER \`${CLUSTER}\``);
      if (/^\s*CREATE/.test(sql)) expect(sql).toMatch(/IF NOT EXISTS|^\s*CREATE OR REPLACE VIEW/);
      if (/ADD (COLUMN|INDEX)/.test(sql)) expect(sql).toMatch(/IF NOT EXISTS/);
    }
  });

  test("a workspace's events: ReplicatedMergeTree events_local per shard, Distributed events over it by person", () => {
    const local = ddl.filter((s) => /CREATE TABLE IF NOT EXISTS `default_ws`\.events_local/.test(s));
    expect(local).toHaveLength(1);
    expect(oneLine(local[0]!)).toContain("ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/events_local', '{replica}') ORDER BY (timestamp, uuid)");
    const distributed = ddl.filter((s) => /CREATE TABLE IF NOT EXISTS `default_ws`\.events /.test(s));
    expect(distributed).toHaveLength(1);
    expect(oneLine(distributed[0]!)).toContain(
      `AS \`default_ws\`.events_local ENGINE = Distributed('${CLUSTER}', 'default_ws', 'events_local', cityHash64(if(userId != '', userId, anonymousId)))`,
    );
    // Indexes, settings and TTL belong to the table that stores; the Distributed one only gets the column.
    for (const sql of ddl.filter((s) => /^ALTER TABLE `default_ws`/.test(s.trim()))) {
      if (/\.events /.test(sql)) expect(oneLine(sql)).toMatch(/ADD COLUMN IF NOT EXISTS (messageId|visitEvent|pagePath|property_read_)/);
      // The visit builder's progress is one replicated table, not sharded.
      else if (/\.visit_progress /.test(sql)) expect(sql).toMatch(/ADD COLUMN IF NOT EXISTS definition /);
      else expect(sql).toMatch(/\.`?((events|visits)_local|catalog|violations|quarantine)`? /);
    }
    expect(ddl.some((s) => /events_local.*replicated_deduplication_window/s.test(s))).toBe(true);
    expect(ddl.some((s) => /non_replicated_deduplication_window/.test(s))).toBe(false);
  });

  test("a workspace's stored visits: ReplicatedCollapsingMergeTree visits_local per shard, Distributed by visit key, and their TTL with the events'", () => {
    const local = ddl.filter((s) => /CREATE TABLE IF NOT EXISTS `default_ws`\.visits_local/.test(s));
    expect(local).toHaveLength(1);
    expect(oneLine(local[0]!)).toContain("ENGINE = ReplicatedCollapsingMergeTree('/clickhouse/tables/{shard}/{database}/visits_local', '{replica}', sign) ORDER BY (toDate(start), visitKey, start)");
    const distributed = ddl.filter((s) => /CREATE TABLE IF NOT EXISTS `default_ws`\.visits /.test(s));
    expect(oneLine(distributed[0]!)).toContain(`AS \`default_ws\`.visits_local ENGINE = Distributed('${CLUSTER}', 'default_ws', 'visits_local', cityHash64(visitKey))`);
    expect(ddl.some((s) => /ALTER TABLE `default_ws`\.`visits_local` ON CLUSTER .* MODIFY TTL end \+ INTERVAL 30 DAY/.test(oneLine(s)))).toBe(true);
    // On a server the processes elect the one that builds visits, by a lease of its own.
    expect(issued.some((s) => /INSERT INTO `analytics_meta`\.leases/.test(s.sql) && (s.params as { name?: string } | undefined)?.name === 'visit-builder')).toBe(true);
  });

  test('the metadata is replicated on every node: one Keeper path for all', () => {
    const metaTables = ddl.filter((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${META}\`.`));
    expect(metaTables.map((s) => /`analytics_meta`\.(\w+)/.exec(s)![1]).sort()).toEqual(
      ['api_keys', 'catalog_definitions', 'cohorts', 'dashboards', 'leases', 'metadata_changes', 'regulations', 'saved_insights', 'schema_migrations', 'suppressions', 'tracking_plans', 'visitor_salts', 'webhook_cursors', 'webhook_deliveries', 'webhooks', 'workspaces'].sort(),
    );
    for (const sql of metaTables) expect(sql).toMatch(/ENGINE = Replicated(Replacing)?MergeTree\('\/clickhouse\/tables\/all\/\{database\}\/\{table\}', '\{replica\}'/);
    expect(ddl.filter((s) => /ENGINE = (Replacing)?MergeTree\b/.test(s))).toEqual([]);
  });

  test("the workspaces' columns added later are added on every replica, with the value older rows read as", () => {
    const added = ddl.filter((s) => /^\s*ALTER TABLE `analytics_meta`\.workspaces ON CLUSTER/.test(s)).map(oneLine);
    expect(added).toContain(`ALTER TABLE \`${META}\`.workspaces ON CLUSTER \`${CLUSTER}\` ADD COLUMN IF NOT EXISTS timezone String DEFAULT 'UTC' AFTER siteDomains`);
  });

  test("a workspace's identity links are replicated on every node, and its shards join their events with them", () => {
    for (const [table, engine] of [
      ['person_first_links', 'Aggregating'],
      ['person_lookup', 'Replacing'],
    ]) {
      const create = ddl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${DEFAULT_DB}\`.${table} `))!;
      expect(create).toMatch(new RegExp(`ENGINE = Replicated${engine}MergeTree\\('/clickhouse/tables/all/\\{database\\}/\\{table\\}', '\\{replica\\}'`));
    }
    // The service stores the links (one node takes the insert and replicates it), not a view on every shard.
    expect(ddl.some((s) => /MATERIALIZED VIEW[^(]*person_(first_)?links/.test(s))).toBe(false);
    expect(ddl.some((s) => /ENGINE = Join/.test(s))).toBe(false);
    expect(ddl.find((s) => s.includes('.events_with_persons'))).toMatch(/LEFT ANY JOIN \(SELECT id, personId FROM `[^`]+`\.person_lookup FINAL/);
  });

  test("a workspace's event catalog is whole on every node, with its de-duplication window and the events' retention", () => {
    const create = ddl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${DEFAULT_DB}\`.catalog `))!;
    expect(oneLine(create)).toMatch(/ENGINE = ReplicatedAggregatingMergeTree\('\/clickhouse\/tables\/all\/\{database\}\/\{table\}', '\{replica\}'\) ORDER BY \(kind, event, path, type, day, library\) SETTINGS replicated_deduplication_window = 1000/);
    const progress = ddl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${DEFAULT_DB}\`.catalog_progress `))!;
    expect(progress).toMatch(/ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/all\/\{database\}\/\{table\}', '\{replica\}', version\)/);
    expect(ddl.some((s) => /ALTER TABLE `default_ws`\.`catalog` ON CLUSTER .* MODIFY TTL day \+ INTERVAL 1 DAY \+ INTERVAL 30 DAY/.test(oneLine(s)))).toBe(true);
    // Where the history of stored events ends: read through the Distributed events, once.
    expect(issued.filter((s) => /INSERT INTO `default_ws`\.catalog_progress SELECT .* FROM `default_ws`\.events$/.test(oneLine(s.sql)))).toHaveLength(1);
  });

  test("a workspace's tracking plan violations and quarantine are whole on every node, with the events' retention; the quarantine flushed at each insert", () => {
    const violations = ddl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${DEFAULT_DB}\`.violations `))!;
    expect(oneLine(violations)).toMatch(/ENGINE = ReplicatedAggregatingMergeTree\('\/clickhouse\/tables\/all\/\{database\}\/\{table\}', '\{replica\}'\) ORDER BY \(day, event, path, kind, expected, actual\)/);
    const quarantine = ddl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS \`${DEFAULT_DB}\`.quarantine `))!;
    expect(oneLine(quarantine)).toMatch(/ON CLUSTER `analytics_cluster` .* ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/all\/\{database\}\/\{table\}', '\{replica\}'\) ORDER BY uuid SETTINGS fsync_after_insert = 1, replicated_deduplication_window = 1000/);
    expect(ddl.some((s) => /ALTER TABLE `default_ws`\.`violations` ON CLUSTER .* MODIFY TTL day \+ INTERVAL 1 DAY \+ INTERVAL 30 DAY/.test(oneLine(s)))).toBe(true);
    expect(ddl.some((s) => /ALTER TABLE `default_ws`\.`quarantine` ON CLUSTER .* MODIFY TTL quarantinedAt \+ INTERVAL 30 DAY/.test(oneLine(s)))).toBe(true);
  });

  test('a stored property read: a column of events_local and of the Distributed events, filled on the shards, and the view replaced', () => {
    const read = "MATERIALIZED JSONExtract(properties, 'plan', 'String')";
    const added = ddl.filter((s) => s.includes(read));
    expect(added.map((s) => /ALTER TABLE `default_ws`\.(\w+)/.exec(s)?.[1])).toEqual(['events_local', 'events']);
    expect(ddl.some((s) => /ALTER TABLE `default_ws`\.events_local ON CLUSTER `analytics_cluster` MATERIALIZE COLUMN property_read_[0-9a-f]{16}/.test(s))).toBe(true);
    // Made under a new name, exchanged with the view in use at once, then the old one dropped.
    const made = ddl.map((s) => /^CREATE OR REPLACE VIEW `default_ws`\.`(events_with_persons_[0-9a-f]{32})` ON CLUSTER `analytics_cluster` \(/.exec(s)?.[1]).filter(Boolean);
    expect(made).toHaveLength(1);
    const replacing = ddl.filter((s) => s.includes(made[0]!)).map((s) => oneLine(s).split(' (')[0]);
    expect(replacing).toEqual([
      `CREATE OR REPLACE VIEW \`default_ws\`.\`${made[0]}\` ON CLUSTER \`analytics_cluster\``,
      `EXCHANGE TABLES \`default_ws\`.events_with_persons AND \`default_ws\`.\`${made[0]}\` ON CLUSTER \`analytics_cluster\``,
      `DROP VIEW IF EXISTS \`default_ws\`.\`${made[0]}\` ON CLUSTER \`analytics_cluster\``,
    ]);
  });

  test('inserts are foreground through the Distributed table, with the quorum when asked', () => {
    expect(clusterInsertSettings({ clickhouseCluster: CLUSTER, clickhouseInsertQuorum: '0' })).toEqual({ distributed_foreground_insert: 1 });
    expect(clusterInsertSettings({ clickhouseCluster: CLUSTER, clickhouseInsertQuorum: 'auto' })).toEqual({ distributed_foreground_insert: 1, insert_quorum: 'auto' });
    expect(clusterInsertSettings({ clickhouseCluster: '', clickhouseInsertQuorum: '2' })).toEqual({});
    // The lease is claimed by quorum and read with sequential consistency.
    expect(issued.some((s) => /INSERT INTO `analytics_meta`\.leases .*SETTINGS insert_quorum = 'auto'/s.test(s.sql))).toBe(true);
    expect(issued.some((s) => /FROM `analytics_meta`\.leases.*select_sequential_consistency = 1/s.test(s.sql))).toBe(true);
  });

  test("every statement parses with the engine's parser; the DDL's AST names the layout's engines", () => {
    for (const { sql } of issued) {
      const formatted = engine.queryBind('SELECT formatQuery({sql:String}) AS f', { sql }, 'TabSeparatedRaw');
      expect(formatted.length).toBeGreaterThan(0);
      if (ddl.includes(sql)) expect(oneLine(formatted)).toContain(`ON CLUSTER ${CLUSTER}`);
    }
    const engines = new Set<string>();
    for (const sql of ddl.filter((s) => /^\s*CREATE TABLE/.test(s))) {
      const ast = engine.query(`EXPLAIN AST ${sql}`, 'TabSeparatedRaw');
      const fn = /Storage definition[^\n]*\n\s*Function (\w+)/.exec(ast)?.[1];
      engines.add(fn!);
    }
    expect([...engines].sort()).toEqual(['Distributed', 'ReplicatedAggregatingMergeTree', 'ReplicatedCollapsingMergeTree', 'ReplicatedMergeTree', 'ReplicatedReplacingMergeTree']);
  });
});
