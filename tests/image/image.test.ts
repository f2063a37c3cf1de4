/**
 * The Docker image as people run it: built from the real Dockerfile with podman (base images
 * made by make-base-images.sh, which `npm run test:image` runs first), started, checked healthy,
 * fed events, restarted on the same volume, stopped. Prints the image's figures.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chownSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../fixtures/webhook-receiver';
import { PROJECT_ROOT } from '../helpers/project-root';
import { podman, podmanOk, waitHealthy } from './podman';

const IMAGE = 'localhost/event-analytics:test';
const RUN_ID = `${process.pid}`;
const VOLUME = `analytics-image-test-${RUN_ID}`;
const KEYS = { public: 'pk_image_test_public', private: 'sk_image_test_private' };
const SERVICE_UID = 10001;
const HEALTHY_WITHIN_MS = 60_000;
/** Files the build reads from the host and must not copy into the image. */
const BUILD_MOUNTS = ['/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro', '/usr/etc/npmrc:/usr/local/etc/npmrc:ro'];

const figures: Record<string, string> = {};
const containers: string[] = [];
const hostDirs: string[] = [];

/** Starts a container of the image with its data in `data` (a volume name or a host path). */
async function start(name: string, data: string, env: Record<string, string> = { PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private }) {
  const port = await freePort();
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // The health timer is podman's systemd unit, absent here: the test runs the check itself.
  await podmanOk('run', '-d', '--name', name, '--health-interval', 'disable', '-p', `127.0.0.1:${port}:4000`, '-v', `${data}:/data`, ...envArgs, IMAGE);
  containers.push(name);
  return `http://127.0.0.1:${port}`;
}

async function send(url: string, events: unknown[]) {
  const res = await fetch(`${url}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEYS.public}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  });
  expect(res.status).toBe(201);
}

async function storedCount(url: string): Promise<number> {
  const res = await fetch(`${url}/events?limit=1`, { headers: { authorization: `Bearer ${KEYS.private}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { total: number }).total;
}

/** Stops a container as `docker stop` does; answers its exit code and the seconds it took. */
async function stop(name: string): Promise<{ code: number; seconds: number }> {
  const started = performance.now();
  await podmanOk('stop', '--time', '30', name);
  const seconds = (performance.now() - started) / 1000;
  return { code: Number(await podmanOk('inspect', '--format', '{{.State.ExitCode}}', name)), seconds };
}

beforeAll(async () => {
  const started = performance.now();
  const mounts = BUILD_MOUNTS.flatMap((m) => ['-v', m]);
  await podmanOk('build', '--format', 'docker', '--tag', IMAGE, ...mounts, PROJECT_ROOT);
  figures.buildSeconds = ((performance.now() - started) / 1000).toFixed(0);
});

afterAll(async () => {
  for (const name of containers) await podman('rm', '--force', '--time', '0', name);
  await podman('volume', 'rm', '--force', VOLUME);
  for (const dir of hostDirs) rmSync(dir, { recursive: true, force: true });
  console.log(`FIGURES image: ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(', ')}`);
});

describe('the image', () => {
  test('is described: non-root user, health check, SIGTERM, labels', async () => {
    const inspect = async (field: string) => JSON.parse(await podmanOk('image', 'inspect', '--format', `{{json ${field}}}`, IMAGE));
    expect(await inspect('.Config.User')).toBe('analytics');
    expect((await inspect('.HealthCheck')).Test).toEqual(['CMD', '/app/node_modules/.bin/bun', 'src/healthcheck.ts']);
    expect(await inspect('.Config.StopSignal')).toBe('SIGTERM');
    expect(await inspect('.Config.Labels')).toMatchObject({ 'org.opencontainers.image.title': 'event-analytics' });
    figures.imageMB = ((await inspect('.Size')) / 1e6).toFixed(0);
  });

  test('holds no build tooling, tests, dev dependencies or host configuration', async () => {
    // Build-time mounts leave empty mount points behind; what matters is that nothing was copied.
    const present = [
      '/app/tests', '/app/bench', '/app/node_modules/deno', '/app/node_modules/bun-types',
      '/app/node_modules/@segment/analytics-node', '/usr/local/bin/node', '/usr/local/bin/npm',
    ];
    const script = `for f in ${present.join(' ')}; do test -e $f && echo "present: $f"; done; ` +
      'test -s /usr/local/etc/npmrc && echo "npm configuration copied"; true';
    expect(await podmanOk('run', '--rm', '--health-interval', 'disable', '--entrypoint', 'sh', IMAGE, '-c', script)).toBe('');
  });

  test('refuses to start with the shipped keys, naming the variables to set', async () => {
    const run = await podman('run', '--rm', '--health-interval', 'disable', IMAGE);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('PRIVATE_API_KEYS: holds the development key shipped in .env.defaults');
    expect(run.stderr).toContain('set PUBLIC_API_KEYS and PRIVATE_API_KEYS');
  });
});

describe('a container on a named volume', () => {
  const name = (n: number) => `analytics-image-test-${RUN_ID}-${n}`;
  let url: string;

  test('becomes healthy and runs as uid 10001', async () => {
    const started = performance.now();
    url = await start(name(1), VOLUME);
    expect(await waitHealthy(name(1), HEALTHY_WITHIN_MS)).toBe(true);
    figures.startToHealthySeconds = ((performance.now() - started) / 1000).toFixed(1);
    expect(await podmanOk('exec', name(1), 'id', '-u')).toBe(String(SERVICE_UID));
  });

  test('serves the tracker script, the console and the API reference', async () => {
    const script = await fetch(`${url}/script.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    for (const page of ['/console', '/docs']) {
      const res = await fetch(url + page);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
    }
  });

  test('stores events and reads them back', async () => {
    await send(url, Array.from({ length: 100 }, (_, i) => ({ type: 'track', event: 'image_test', userId: `u${i % 5}` })));
    expect(await storedCount(url)).toBe(100);
    await Bun.sleep(2000);
    // The service process is pid 1: its resident memory after the load, idle.
    const rss = await podmanOk('exec', name(1), 'sh', '-c', "awk '/VmRSS/ {print $2}' /proc/1/status");
    figures.idleMemoryMB = (Number(rss) / 1024).toFixed(0);
  });

  test('backs itself up from inside the container (docs/operations.md#backups)', async () => {
    const printed = await podmanOk('exec', name(1), 'bun', 'src/backups/cli.ts', 'backup');
    expect(JSON.parse(printed)).toMatchObject({ status: 'finished' });
  });

  test('stops cleanly on podman stop', async () => {
    const stopped = await stop(name(1));
    figures.stopSeconds = stopped.seconds.toFixed(2);
    expect(stopped.code).toBe(0);
    expect((await podmanOk('logs', name(1))).split('\n').at(-1)).toContain('"msg":"stopped"');
  });

  test('a new container on the same volume serves the same events, and stops cleanly too', async () => {
    url = await start(name(2), VOLUME);
    expect(await waitHealthy(name(2), HEALTHY_WITHIN_MS)).toBe(true);
    expect(await storedCount(url)).toBe(100);
    await send(url, [{ type: 'page', userId: 'u1', properties: { path: '/after-restart' } }]);
    expect(await storedCount(url)).toBe(101);
    expect((await stop(name(2))).code).toBe(0);
  });
});

describe('a container on a directory mounted from the host', () => {
  test('writes its data there as uid 10001', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'analytics-image-data-'));
    hostDirs.push(dir);
    chownSync(dir, SERVICE_UID, SERVICE_UID);
    const name = `analytics-image-test-${RUN_ID}-host`;
    const url = await start(name, dir);
    expect(await waitHealthy(name, HEALTHY_WITHIN_MS)).toBe(true);
    await send(url, [{ type: 'identify', userId: 'u1', traits: { plan: 'pro' } }]);
    expect(await storedCount(url)).toBe(1);
    expect((await stop(name)).code).toBe(0);
    const written = readdirSync(dir);
    expect(written.length).toBeGreaterThan(0);
    for (const entry of written) expect(statSync(join(dir, entry)).uid).toBe(SERVICE_UID);
  });
});
