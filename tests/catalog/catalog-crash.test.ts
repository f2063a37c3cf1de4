import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';
import { createWorkspace, sendEvents } from '../helpers/test-service';
import { expectAgreement, randomLog, type CatalogClient } from './catalog-agreement';

/**
 * The catalog observes events as the ingest log takes them and adds their rows once they are
 * loaded; events a crash leaves only in the log are counted from the log at the next start. A
 * service killed (SIGKILL) with events logged and observed but not loaded counts each stored
 * event once, as the plain computation over the stored events does.
 */

const ADMIN = { public: 'pk_catalog_crash', private: 'sk_catalog_crash' };
const dataDir = mkdtempSync(join(tmpdir(), 'catalog-crash-'));
const env = { DATA_DIR: dataDir, PUBLIC_API_KEYS: ADMIN.public, PRIVATE_API_KEYS: ADMIN.private };
let svc: ServiceProcess | undefined;

const client: CatalogClient & { publicKey: string } = {
  privateKey: ADMIN.private,
  publicKey: ADMIN.public,
  request: (method, path, options = {}) =>
    fetch(svc!.url + path, {
      method,
      headers: { ...options.headers, ...(options.key ? { authorization: `Bearer ${options.key}` } : {}), ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
};

afterAll(async () => {
  svc?.proc.kill('SIGKILL');
  await svc?.proc.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

test('a crash with observed events not yet loaded counts each stored event once', async () => {
  // The loader holds events back for minutes, but loads at once what a read needs (read-your-writes).
  svc = await startServiceProcess({ ...env, INGEST_LOAD_MAX_AGE_MS: '600000', INGEST_FLUSH_ROWS: '1000000' });
  const ws = await createWorkspace(client, { name: 'Catalog crash' });
  const log = randomLog(7_001, 600);
  for (let i = 0; i < 200; i += 100) await sendEvents(client, log.slice(i, i + 100), ws.publicApiKey);
  await expectAgreement(client, ws);
  // Observed as they were logged; killed before any load takes them.
  for (let i = 200; i < 400; i += 100) await sendEvents(client, log.slice(i, i + 100), ws.publicApiKey);
  svc.proc.kill('SIGKILL');
  await svc.proc.exited;

  svc = await startServiceProcess(env);
  const replayed = svc.lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'ingest log replayed');
  expect(replayed?.eventsToLoad).toBe(200);
  await expectAgreement(client, ws);
  for (let i = 400; i < 600; i += 100) await sendEvents(client, log.slice(i, i + 100), ws.publicApiKey);
  await expectAgreement(client, ws);
}, 120_000);
