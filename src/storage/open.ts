import { join, resolve } from 'node:path';
import type { Config } from '../config';
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

/** The server backend when CLICKHOUSE_URL is set, else the embedded engine over DATA_DIR. */
export function openStorage(config: Config): Storage {
  if (config.clickhouseUrl) {
    return new ServerStorage({
      url: config.clickhouseUrl,
      username: config.clickhouseUser,
      password: config.clickhousePassword,
      requestTimeoutMs: config.clickhouseRequestTimeoutMs,
    });
  }
  return new EmbeddedStorage(config.dataDir, config.engineReadSessions, config.ingestWriters, backupDirectory(config));
}
