import { join, resolve } from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../log';
import { EmbeddedStorage } from './embedded';
import { ServerStorage } from './server';
import type { Storage } from './storage';

/** Where the embedded engine writes backups: BACKUP_DIR, or `backups` in DATA_DIR. */
export function backupDirectory(config: Pick<Config, 'backupDir' | 'dataDir'>): string {
  return resolve(config.backupDir || join(config.dataDir, 'backups'));
}

/** Where the ingest log lives: INGEST_LOG_DIR, or `ingest-log` in DATA_DIR (in server mode too). */
export function ingestLogDirectory(config: Pick<Config, 'ingestLogDir' | 'dataDir'>): string {
  return resolve(config.ingestLogDir || join(config.dataDir, 'ingest-log'));
}

/**
 * On a cluster, inserts go through each workspace's Distributed `events` table. By default a
 * Distributed table acknowledges once the rows sit in its local queue and sends them to the shards
 * later: a 201 would then come before the events are stored or readable. Foreground inserts
 * answer once every shard has its rows; with CLICKHOUSE_INSERT_QUORUM, once that many replicas
 * of each shard have them.
 */
export function clusterInsertSettings(config: Pick<Config, 'clickhouseCluster' | 'clickhouseInsertQuorum'>): Record<string, string | number> {
  if (!config.clickhouseCluster) return {};
  const quorum = config.clickhouseInsertQuorum;
  return {
    distributed_foreground_insert: 1,
    ...(quorum !== '0' ? { insert_quorum: quorum } : {}),
  };
}

/** The server backend when CLICKHOUSE_URL is set, else the embedded engine over DATA_DIR. */
export function openStorage(config: Config, log: Logger): Storage {
  if (config.clickhouseUrl) {
    return new ServerStorage({
      url: config.clickhouseUrl,
      username: config.clickhouseUser,
      password: config.clickhousePassword,
      requestTimeoutMs: config.clickhouseRequestTimeoutMs,
      insertSettings: clusterInsertSettings(config),
      sandboxUsers: {
        mode: config.clickhouseSandboxUsers,
        cluster: config.clickhouseCluster,
        onUnavailable: (message) =>
          log.warn('the server did not let the service make sandbox users: user SQL runs as CLICKHOUSE_USER, checked by the query guard alone (CLICKHOUSE_SANDBOX_USERS)', { message }),
      },
    });
  }
  return new EmbeddedStorage(config.dataDir, config.engineReadSessions, config.ingestWriters, backupDirectory(config));
}
