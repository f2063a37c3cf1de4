import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/project-root';
import { makesVisits } from '../web-analytics/stats-reference';
import { startServiceProcess, TEST_RUNTIME, type ServiceProcess } from '../helpers/service-process';

/**
 * Each archive under tests/fixtures/releases is a data directory written by that release
 * (tests/fixtures/releases/write-release-data.ts). The current code must start on it, migrate
 * it, and serve everything the release stored.
 */
const RELEASES_DIR = join(PROJECT_ROOT, 'tests', 'fixtures', 'releases');
const releases = readdirSync(RELEASES_DIR).filter((f) => f.endsWith('.tar.gz')).map((f) => f.slice(0, -'.tar.gz'.length));

interface Manifest {
  release: string;
  keys: { public: string; private: string };
  eventsPerWorkspace: number;
  workspace: { workspaceId: string; publicApiKey: string; privateApiKey: string };
  webhookUuid: string;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('there is at least one previous release to upgrade from', () => {
  expect(releases.length).toBeGreaterThan(0);
});

for (const release of releases) {
  describe(`upgrading a data directory written by release ${release}`, () => {
    let svc: ServiceProcess;
    let manifest: Manifest;

    const get = async (path: string, key: string) => {
      const res = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as any;
    };
    const query = async (key: string, sql: string) => {
      const res = await fetch(`${svc.url}/queries`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ queries: [sql] }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as any).results[0];
    };

    test('the service starts on it', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), `analytics-upgrade-${release}-`));
      dirs.push(dataDir);
      const untar = Bun.spawnSync(['tar', '-xzf', join(RELEASES_DIR, `${release}.tar.gz`), '-C', dataDir]);
      expect(untar.exitCode).toBe(0);
      const manifestFile = join(dataDir, 'release-manifest.json');
      manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
      // The upgrade runs an hour after the release stored its data (the archive keeps the time
      // its manifest was written, once the release's service had stopped): within the 24 h
      // de-duplication window of its messageIds on whichever day the test runs.
      const upgradedAt = statSync(manifestFile).mtimeMs + 3_600_000;
      svc = await startServiceProcess({ DATA_DIR: dataDir, PUBLIC_API_KEYS: manifest.keys.public, PRIVATE_API_KEYS: manifest.keys.private }, TEST_RUNTIME, undefined, {
        clockAt: upgradedAt,
      });
    });

    test("every workspace's events are there, with their fields", async () => {
      for (const [privateKey, prefix] of [
        [manifest.keys.private, 'default'],
        [manifest.workspace.privateApiKey, 'second'],
      ] as const) {
        const page = await get('/events?limit=1000', privateKey);
        expect(page.total).toBe(manifest.eventsPerWorkspace);
        const signup = await get(`/events?event=${prefix}_signup&limit=1`, privateKey);
        expect(signup.results[0]).toMatchObject({ type: 'track', event: `${prefix}_signup`, properties: { plan: 'free' } });
        const counted = await query(privateKey, 'SELECT count() AS n, uniqExact(userId) AS users FROM events');
        expect(counted.results[0]).toMatchObject({ users: 10 });
        expect(Number(counted.results[0].n)).toBe(manifest.eventsPerWorkspace);
      }
    });

    test('the workspace, its keys and its webhook survive', async () => {
      const workspace = await get(`/workspaces/${manifest.workspace.workspaceId}`, manifest.keys.private);
      expect(workspace).toMatchObject({ name: 'Release fixture', properties: { release } });
      const webhooks = await get('/webhooks', manifest.workspace.privateApiKey);
      expect(webhooks.results.map((w: { uuid: string }) => w.uuid)).toEqual([manifest.webhookUuid]);
    });

    test('a repeated messageId from before the upgrade is still recognised, and new events are stored', async () => {
      const send = (events: unknown[]) =>
        fetch(`${svc.url}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${manifest.workspace.publicApiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events }),
        });
      expect((await send([{ type: 'track', event: 'again', messageId: 'second-msg-0' }])).status).toBe(201);
      expect((await send([{ type: 'track', event: 'after_upgrade', userId: 'new' }])).status).toBe(201);
      const page = await get('/events?limit=1000', manifest.workspace.privateApiKey);
      expect(page.total).toBe(manifest.eventsPerWorkspace + 1);
    });

    test("the release's events have the web-analytics columns (migrations), through events_with_persons too: none makes visits or has a page", async () => {
      const page = await get('/events?limit=1000', manifest.workspace.privateApiKey);
      expect(page.results.filter(makesVisits)).toEqual([]);
      const [row] = (await query(manifest.workspace.privateApiKey, "SELECT countIf(visitEvent) AS flagged, countIf(pagePath != '') AS paths, count() AS n FROM events_with_persons")).results;
      expect(row).toEqual({ flagged: 0, paths: 0, n: page.total });
    });

    test("a property read made twice gets a column, filled for the release's events in the background (progress in the log), and answers the same", async () => {
      const sql = "SELECT JSONExtract(properties, 'plan', 'String') AS plan, count() AS n FROM events GROUP BY plan ORDER BY plan";
      const before = await query(manifest.keys.private, sql);
      await query(manifest.keys.private, sql);
      const logged = (msg: string) => svc.lines.some((line) => JSON.parse(line).msg === msg);
      for (let waited = 0; !logged('materialization of a property column done'); waited += 50) {
        if (waited > 30_000) throw new Error(`no materialization logged:\n${svc.lines.slice(-20).join('\n')}`);
        await Bun.sleep(50);
      }
      expect(logged('property read stored in a column') && logged('materialization of a property column started')).toBe(true);
      expect(await query(manifest.keys.private, sql)).toEqual(before);
      expect(before.results.find((r: { plan: string }) => r.plan === 'free')).toBeDefined();
    });

    test('it stops cleanly', async () => {
      svc.proc.kill('SIGTERM');
      expect(await svc.proc.exited).toBe(0);
    });
  });
}
