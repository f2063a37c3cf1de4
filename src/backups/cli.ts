/**
 * `npm run backup`: asks the running service for a backup (POST /backups, admin key) and waits
 * for it to finish; prints it. The service holds the embedded engine's data directory, so the
 * backup is made by the service's own engine, while it runs.
 *
 * `npm run restore -- <backup directory>`: restores a backup into DATA_DIR, which must be empty
 * or missing (a fresh directory: never the directory of a running service). Then start the
 * service on it. Settings come from .env.defaults, .env and the environment, as for the service;
 * BACKUP_URL (default: this configuration's host and port) and BACKUP_KEY (default: the first
 * of PRIVATE_API_KEYS) for `backup`.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Session } from 'chdb';
import { loadConfig, type Config } from '../config';
import { localUrl } from '../http/serve';
import type { Backup } from './model';

const POLL_MS = 500;

async function backup(config: Config): Promise<void> {
  const url = process.env.BACKUP_URL || localUrl(config.host, config.port);
  const headers = { authorization: `Bearer ${process.env.BACKUP_KEY || config.privateApiKeys[0]}` };
  const res = await fetch(`${url}/backups`, { method: 'POST', headers });
  if (res.status !== 202) throw new Error(`POST /backups answered ${res.status}: ${await res.text()}`);
  let state = (await res.json()) as Backup;
  while (state.status === 'running') {
    await new Promise((wake) => setTimeout(wake, POLL_MS));
    const polled = await fetch(`${url}/backups/${state.id}`, { headers });
    if (polled.status !== 200) throw new Error(`GET /backups/${state.id} answered ${polled.status}: ${await polled.text()}`);
    state = (await polled.json()) as Backup;
  }
  process.stdout.write(`${JSON.stringify(state)}\n`);
  if (state.status !== 'finished') throw new Error(`the backup failed: ${state.error ?? 'no reason given'}`);
}

async function restore(config: Config, from: string | undefined): Promise<void> {
  if (!from) throw new Error('usage: npm run restore -- <backup directory>');
  const path = resolve(from);
  if (!existsSync(`${path}/.backup`)) throw new Error(`${path} is not a backup (it has no .backup file)`);
  if (/['\\\n]/.test(path)) throw new Error('the backup path must not hold quotes, backslashes or line breaks');
  const dataDir = resolve(config.dataDir);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new Error(`DATA_DIR ${dataDir} is not empty: restore into a fresh directory, then point the service at it`);
  }
  const started = performance.now();
  const session = new Session(dataDir, { connectionArgs: [`--backups.allowed_path=${dirname(path)}`] });
  try {
    // Everything the backup holds: the metadata database and the workspace databases.
    await session.queryAsync(`RESTORE ALL FROM File('${path}')`);
  } finally {
    session.close();
  }
  process.stdout.write(`${JSON.stringify({ restored: path, dataDir, seconds: Number(((performance.now() - started) / 1000).toFixed(2)) })}\n`);
}

const [command, argument] = process.argv.slice(2);
try {
  const config = loadConfig();
  if (command === 'backup') await backup(config);
  else if (command === 'restore') await restore(config, argument);
  else throw new Error('usage: bun src/backups/cli.ts backup | restore <backup directory>');
} catch (err) {
  process.stderr.write(`${command ?? 'backup'} failed: ${(err as Error).message}\n`);
  process.exit(1);
}
