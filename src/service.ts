import { BackupRunner } from './backups/backup-runner';
import type { Config } from './config';
import { IngestBuffer } from './events/ingest-buffer';
import { RecentMessageIds } from './events/recent-message-ids';
import { createApp } from './app';
import { EventStreams } from './events/stream';
import { ByteBudget } from './http/body-budget';
import { idleTimeoutSeconds } from './http/idle-timeout';
import { allInterfaces, localUrl, serve, type HttpServer } from './http/serve';
import { serveOwnPort } from './clickhouse-http/own-port';
import type { Logger } from './log';
import { createServiceMetrics } from './metrics/service-metrics';
import { currentHeapRuntime, HeapCollector } from './heap-collector';
import { Countries } from './web-analytics/countries';
import { Enrichment } from './web-analytics/enrichment';
import { VisitBuilder } from './web-analytics/visits/visit-builder';
import { Lease } from './coordination/lease';

import { VisitorSalts } from './web-analytics/visitor-salts';
import { MonotonicClock } from './monotonic-clock';
import { EgressPolicy } from './net/egress-policy';
import { systemResolver, type HostResolver } from './net/host-resolver';
import { QueryRunner } from './queries/query-runner';
import { ResultBudget } from './queries/result-budget';
import { FastReads } from './properties/fast-reads';
import { ReadColumns } from './properties/read-columns';
import { engineSessions, engineThreads } from './storage/engine-threads';
import { RegulationRunner } from './regulations/regulation-runner';
import { SuppressionList } from './regulations/suppression-list';
import { Catalog } from './catalog/catalog';
import { CatalogRecorder } from './catalog/catalog-recorder';
import { CATALOG_DEFINITIONS } from './catalog/definitions';
import { MigrationRunner } from './storage/migrations/runner';
import { Quarantine } from './tracking-plans/quarantine';
import { TrackingPlans } from './tracking-plans/tracking-plans';
import { ViolationCounts } from './tracking-plans/violation-counts';
import { IdentityLinks } from './persons/identity-links';
import { Persons } from './persons/persons';
import { CohortRecords } from './cohorts/cohort-records';
import { Cohorts } from './cohorts/cohorts';
import { Insights } from './insights/insights';
import { Dashboards } from './dashboards/dashboards';
import { TileAnswerCache } from './dashboards/tile-answer-cache';
import { DASHBOARDS, SAVED_INSIGHTS, VersionedRecords } from './dashboards/records';
import { SavedInsights } from './dashboards/saved-insights';
import { backupDirectory, ingestLogDirectory, openStorage } from './storage/open';
import type { Storage } from './storage/storage';
import { WebhookSupervisor } from './webhooks/supervisor';
import { WorkspaceStore } from './workspaces/workspace-store';

/** The lease's name in the metadata database: the process that builds stored visits. */
const VISIT_BUILDER_LEASE = 'visit-builder';

export interface Service {
  readonly url: string;
  readonly port: number;
  /** The port of the ClickHouse interface's own listener (CLICKHOUSE_INTERFACE_PORT), when there is one. */
  readonly clickhousePort?: number;
  readonly storage: Storage;
  readonly buffer: IngestBuffer;
  readonly store: WorkspaceStore;
  readonly webhooks: WebhookSupervisor;
  readonly streams: EventStreams;
  readonly visits: VisitBuilder;
  /** Stops accepting, finishes in-flight requests, commits accepted events, closes storage. */
  stop(): Promise<void>;
}

/** The transport's own hard cap sits above ours so that our 413 (problem+json) answers first. */
const TRANSPORT_BODY_SLACK = 2;
/** A live stream silent this long gets a keep-alive comment (below common proxies' 30-60 s idle limits). */
const STREAM_HEARTBEAT_MS = 15_000;

/**
 * Opens storage, migrates, and serves the API on `config.host:config.port` (0 picks a free port).
 * `resolver` turns webhook host names into addresses (tests give their own).
 */
export async function startService(config: Config, log: Logger, storage: Storage = openStorage(config, log), resolver: HostResolver = systemResolver): Promise<Service> {
  const threads = engineThreads();
  if (storage.mode === 'embedded' && threads !== undefined && threads < engineSessions(config)) {
    log.warn('the runtime runs fewer engine statements at once than the service has engine sessions: long statements will hold up others, ingestion included; start it with UV_THREADPOOL_SIZE set (npm start and the Docker image do)', {
      threads,
      sessions: engineSessions(config),
    });
  }
  const migrations = new MigrationRunner(storage, config.metaDatabase, config.clickhouseCluster, log);
  const store = new WorkspaceStore(storage, migrations, { ...config, refreshMs: config.workspaceRefreshMs, changePollMs: config.workspaceChangePollMs }, log);
  await store.start();
  // Early, to log the materializations a stop cut short as the engine takes them up again.
  const readColumns = new ReadColumns(storage, { cluster: config.clickhouseCluster, maxColumns: config.propertyColumnsMax, refreshMs: config.workspaceRefreshMs }, log);
  await readColumns.resume(store.list().map((w) => w.databaseName));
  const clock = new MonotonicClock();
  const messageIds = new RecentMessageIds(storage, { windowMs: config.dedupWindowMs, maxIds: config.dedupMaxMessageIds }, log);
  store.onDatabasesChanged(() => messageIds.retainOnly(new Set(store.list().map((w) => w.databaseName))));
  const streams = new EventStreams({ maxConnectionsPerKey: config.streamMaxConnectionsPerKey, bufferBytes: config.streamBufferBytes, heartbeatMs: STREAM_HEARTBEAT_MS });
  store.onDatabasesChanged(() => streams.retainWorkspaces((id) => store.find(id) !== undefined));
  // Sampled at scrape time only, once the buffer and the supervisor exist.
  const bodies = new ByteBudget(config.maxBodyBytesInFlight, config.maxBodyBytesPerAddress);
  const metrics = createServiceMetrics({
    ingestQueueDepth: () => buffer.depth,
    ingestLogBytes: () => buffer.logBytes,
    ingestLagSeconds: () => buffer.lagSeconds,
    webhookRetriesPending: () => webhooks.retriesPending(),
    bodyBytesInFlight: () => bodies.inUse,
    visitBuildsPending: () => visits.pending,
    catalogBatchesMissed: () => catalogRecorder.missedBatches,
  });
  const catalogRecorder = new CatalogRecorder(storage, () => store.list().map((w) => w.databaseName), log, migrations.onCluster);
  const identities = new IdentityLinks(storage, config.clickhouseCluster !== '', log);
  // Other processes sharing a ClickHouse server load events this one is not told of: nothing is kept there.
  const tileAnswers = new TileAnswerCache(storage.mode === 'server' ? 0 : config.dashboardAnswersMaxAgeSeconds * 1000);
  const visits = new VisitBuilder(storage, log, {
    sessionTimeoutMinutes: config.sessionTimeoutMinutes,
    // Several processes may share a server: the one holding the lease builds.
    election:
      storage.mode === 'server'
        ? new Lease(storage, { metaDatabase: config.metaDatabase, name: VISIT_BUILDER_LEASE, leaseMs: config.visitBuilderLeaseMs, cluster: config.clickhouseCluster !== '' }, log)
        : undefined,
    databases: () => store.list().map((w) => w.databaseName),
    storageTable: config.clickhouseCluster ? `visits_local ${migrations.onCluster}` : 'visits',
  });
  store.onRemove(async (workspace) => visits.forget(workspace.databaseName));
  store.onDatabasesChanged(() => identities.retainOnly(new Set(store.list().map((w) => w.databaseName))));
  // The buffer announces commits to the webhooks, which read its frontier: each is used only
  // once the other exists (nothing commits before the server listens).
  const suppressions = new SuppressionList(store);
  const violationCounts = new ViolationCounts(storage, migrations.onCluster, log, { wanted: (database) => plans.announces(database), found: (database, kinds) => plans.announce(database, kinds) });
  const quarantine = new Quarantine(storage, migrations.onCluster);
  const plans = new TrackingPlans(storage, config.metaDatabase, store, quarantine, violationCounts, { broken: metrics.trackingPlanBroken, violated: metrics.trackingPlanViolated });
  await plans.start(config.workspaceRefreshMs, log);
  violationCounts.start();
  store.onRemove((workspace) => plans.removeWorkspace(workspace));
  // Several processes may share a ClickHouse server: a read through another one must see the events.
  const ack = config.ingestAck === 'auto' ? (storage.mode === 'server' ? 'loaded' : 'log') : config.ingestAck;
  const buffer = await IngestBuffer.open(
    storage,
    {
      logDir: ingestLogDirectory(config),
      fsync: config.ingestFsync,
      segmentBytes: config.ingestLogSegmentBytes,
      flushRows: config.ingestFlushRows,
      loadMaxAgeMs: config.ingestLoadMaxAgeMs,
      maxLogBytes: config.ingestLogMaxBytes,
      maxLagMs: config.ingestLoadMaxLagMs,
      memoryEvents: config.ingestQueueMaxEvents,
      readWaitMs: config.ingestReadWaitMs,
      ack,
      onInserted: (database, links) => {
        identities.loaded(database, links);
        visits.changed(database);
        tileAnswers.changed(database);
      },
      linksOf: (database, events) => identities.linksOf(database, events),
      onCommitted: (database, events) => {
        webhooks.committed(database, events);
        streams.committed(database, events);
      },
      announces: (database) => webhooks.listensTo(database) || streams.listensTo(database),
      messageIds,
      observer: catalogRecorder,
      onStored: (database, lines, token) => catalogRecorder.stored(database, lines, token),
      onFlush: metrics.ingestFlushed,
      suppressionCheck: (database) => suppressions.checkFor(database),
      onSuppressed: metrics.eventsSuppressed,
      screen: (database, events, door) => plans.screen(database, events, door),
    },
    log,
  );
  plans.announceThrough((database, events) => buffer.submit(database, events), clock);
  const webhooks = new WebhookSupervisor(
    storage,
    store,
    clock,
    {
      metaDatabase: config.metaDatabase,
      frontier: () => buffer.frontier(),
      mode: config.webhookDelivery,
      leaseMs: config.webhookLeaseMs,
      cluster: config.clickhouseCluster !== '',
      refreshMs: config.workspaceRefreshMs,
      changePollMs: config.workspaceChangePollMs,
      delivery: {
        timeoutMs: config.webhookTimeoutMs,
        schedule: config.webhookRetrySchedule,
        blockingRetries: config.webhookBlockingRetries,
        batchSize: config.webhookBatchSize,
        bufferEvents: config.webhookBufferEvents,
        settleMs: config.webhookSettleMs,
      },
      egress: new EgressPolicy(config.egressAllowlist, resolver),
      onDeliveryAttempt: metrics.webhookAttempted,
    },
    log,
  );
  await webhooks.start();
  const regulations = new RegulationRunner({
    storage,
    store,
    suppressions,
    metaDatabase: config.metaDatabase,
    onCluster: migrations.onCluster,
    eventsTable: migrations.eventsTable,
    ingestSettled: async () => {
      await buffer.loaded();
      await Promise.all(store.list().map((w) => identities.settled(w.databaseName)));
    },
    discardDeliveries: (database, erased) => webhooks.discard(database, erased),
    eventsErased: async (database, keys) => {
      tileAnswers.withdraw(database);
      await Promise.all([visits.erased(database, keys), catalogRecorder.erased(database), violationCounts.erased(database)]);
    },
    identities,
    refreshMs: config.workspaceRefreshMs,
    log,
  });
  await regulations.start();
  // A deleted workspace's events still in the log are loaded before its database is dropped, or
  // they would land in a new workspace given the same database name.
  store.onRemove((workspace) => buffer.loaded(workspace.databaseName));
  // What a crash left in the ingest log is loaded before anything is served: reads and messageId
  // de-duplication then find it in the engine.
  await buffer.drain();
  for (const { databaseName } of store.list()) {
    await identities.settled(databaseName);
    await identities.rebuild(databaseName);
  }
  // The catalog of events stored before it existed (an upgrade) is built in the background.
  catalogRecorder.start();
  // Visits of events stored before (a restart, an upgrade) are built in the background.
  await visits.start();
  for (const { databaseName } of store.list()) visits.changed(databaseName);
  const fastReads = new FastReads(storage, readColumns, log);
  const enrichment = new Enrichment({ trustedProxies: config.trustedProxies, storeClientAddress: config.storeClientAddress, countries: new Countries() });
  const visitorSalts = new VisitorSalts(storage, config.metaDatabase, migrations.onCluster);
  store.onDatabasesChanged(() => fastReads.databasesChanged(new Set(store.list().map((w) => w.databaseName))));
  const runner = new QueryRunner(
    storage,
    {
      concurrency: config.queryConcurrency,
      queueMax: config.queryQueueMax,
      workspaceConcurrency: config.queryWorkspaceConcurrency,
      workspaceQueueMax: config.queryWorkspaceQueueMax,
      workspaceSecondsPerMinute: config.queryWorkspaceSecondsPerMinute,
      limits: {
        timeoutMs: config.queryTimeoutMs,
        maxResultRows: config.queryMaxResultRows,
        maxResultBytes: config.queryMaxResultBytes,
        maxMemoryBytes: config.queryMaxMemoryBytes,
      },
      onStatement: metrics.statementRan,
      fastReads,
      results: new ResultBudget(config.queryResultBytesInFlight, config.queryMaxRequestResultBytes, config.httpIdleTimeoutMs),
    },
    log,
  );
  store.onDatabasesChanged(() => runner.databasesChanged());
  // A read sees the events acknowledged before it, and the persons their links make.
  const loadedAndResolved = async (database: string) => {
    await buffer.loaded(database);
    await identities.settled(database);
  };
  const cohorts = new Cohorts(new CohortRecords(storage, config.metaDatabase), runner, loadedAndResolved);
  store.onRemove((workspace) => cohorts.removeWorkspace(workspace.workspaceId));
  const persons = new Persons(runner, cohorts, loadedAndResolved);
  const insights = new Insights(runner, cohorts, loadedAndResolved);
  const savedInsights = new SavedInsights(new VersionedRecords(storage, config.metaDatabase, SAVED_INSIGHTS));
  const dashboards = new Dashboards(new VersionedRecords(storage, config.metaDatabase, DASHBOARDS), savedInsights, { insights, runner, ingested: loadedAndResolved, answers: tileAnswers, log });
  store.onRemove((workspace) => savedInsights.removeWorkspace(workspace.workspaceId));
  store.onRemove((workspace) => dashboards.removeWorkspace(workspace.workspaceId));
  const catalog = new Catalog(storage, new VersionedRecords(storage, config.metaDatabase, CATALOG_DEFINITIONS), async (database) => {
    await buffer.loaded(database);
    await catalogRecorder.settled(database);
  });
  store.onRemove((workspace) => catalog.removeWorkspace(workspace.workspaceId));
  store.onRemove(async (workspace) => tileAnswers.withdraw(workspace.databaseName));
  const heapRuntime = currentHeapRuntime();
  const heapCollector = heapRuntime && new HeapCollector(heapRuntime, { limitBytes: config.memorySoftLimitMb * 1024 * 1024, onCollected: metrics.heapCollected }, log);
  const backups = new BackupRunner({ storage, store, metaDatabase: config.metaDatabase, backupDir: backupDirectory(config), ingested: () => buffer.loaded() });
  const close = async () => {
    heapCollector?.stop();
    streams.close();
    await regulations.stop();
    await buffer.close();
    plans.stop();
    await violationCounts.stop();
    await catalogRecorder.stop();
    await visits.stop();
    await webhooks.stop();
    await runner.close();
    readColumns.close();
    await store.stop();
    await storage.close();
  };
  let server: HttpServer;
  let clickhouseServer: HttpServer | undefined;
  try {
    const app = createApp({ ...config, log, storage, store, buffer, runner, clock, webhooks, metrics, bodies, regulations, backups, persons, cohorts, insights, savedInsights, dashboards, catalog, governance: { plans, counts: violationCounts, quarantine }, streams, fastReads, enrich: enrichment.forRequest, visitorSalts, visits, ingested: loadedAndResolved, fastCollection: typeof Bun !== 'undefined' && ack === 'log' });
    const serving = {
      port: config.port,
      hostname: config.host,
      // Imports stream larger bodies; every other route reads at most MAX_BODY_BYTES of its own.
      maxRequestBodySize: Math.max(config.maxBodyBytes * TRANSPORT_BODY_SLACK, config.importMaxBodyBytes),
      idleTimeoutSeconds: idleTimeoutSeconds(config.httpIdleTimeoutMs),
      gate: config.httpConnectionGate,
      log,
      onAnswered: metrics.requestAnswered,
    };
    server = serve(app, serving);
    if (config.clickhouseInterfacePort !== undefined) clickhouseServer = serveOwnPort(app, { ...serving, port: config.clickhouseInterfacePort });
  } catch (err) {
    // A setting only the assembled app can check (a tracker path taking a route), or a port
    // already taken: nothing may stay open.
    await Promise.all([server!, clickhouseServer].map((listening) => listening?.stop(true)));
    await close();
    throw err;
  }
  heapCollector?.start();
  const url = localUrl(config.host, server.port);
  // Where the socket listens, as it is: on every interface no one URL says it, and the loopback
  // URL is only where this machine reaches it.
  const where = allInterfaces(config.host) ? { interfaces: 'all', loopbackUrl: url } : { url };
  log.info('listening', { host: config.host, port: server.port, ...where, storage: storage.mode, ...(clickhouseServer ? { clickhousePort: clickhouseServer.port } : {}) });
  // The address people look for in the log first: the console's page (served at /console/).
  log.info(`console at ${url}/console/`, { url: `${url}/console/` });

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    log.info('stopping: no new connections; finishing in-flight requests');
    // Live streams never finish on their own: they end now, so that the wait below can.
    streams.close();
    const drained = Promise.all([server.stop(false), clickhouseServer?.stop(false)]);
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), config.shutdownTimeoutMs).unref()),
    ]);
    if (timedOut) {
      log.warn('in-flight requests did not finish in time; closing their connections', { timeoutMs: config.shutdownTimeoutMs });
      await Promise.all([server.stop(true), clickhouseServer?.stop(true)]);
    }
    await close();
    log.info('stopped');
  };
  return { url, port: server.port, clickhousePort: clickhouseServer?.port, storage, buffer, store, webhooks, streams, visits, stop: () => (stopping ??= stop()) };
}
