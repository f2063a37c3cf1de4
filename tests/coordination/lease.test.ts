/**
 * The lease protocol (src/coordination/lease.ts) on the real engine: several contenders in one
 * process, each with its own holder id, as several processes would be. At no sampled moment do
 * two hold it; a holder cut off from storage stops before another starts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Lease } from '../../src/coordination/lease';
import { silentLogger } from '../../src/log';
import { EmbeddedStorage } from '../../src/storage/embedded';
import { metaMigrations } from '../../src/storage/migrations/meta';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { StorageUnavailableError, type Storage } from '../../src/storage/storage';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';

const LEASE_MS = 1500;
let storage: EmbeddedStorage;
let meta: string;

beforeAll(async () => {
  storage = new EmbeddedStorage(ENGINE_DIR, 2);
  meta = uniqueName('meta_lease');
  const migrations = new MigrationRunner(storage, meta, '', silentLogger);
  await migrations.bootstrap();
  await migrations.apply(meta, metaMigrations);
});
afterAll(() => storage.close());

const lease = (name: string, on: Storage = storage) => new Lease(on, { metaDatabase: meta, name, leaseMs: LEASE_MS, cluster: false }, silentLogger);

/** Samples `leases` every few milliseconds for `ms`; fails when two hold at once. Answers who held, in turn. */
async function watch(leases: Lease[], ms: number): Promise<number[]> {
  const holders: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const now = leases.map((l, i) => (l.holds() ? i : -1)).filter((i) => i >= 0);
    expect(now.length).toBeLessThanOrEqual(1);
    if (now.length === 1 && holders.at(-1) !== now[0]) holders.push(now[0]!);
    await Bun.sleep(5);
  }
  return holders;
}

/** A storage that can be cut off, as a holder whose network fails. */
function severable(): { storage: Storage; cut(): void } {
  let cut = false;
  const guard = <T>(run: () => Promise<T>) => (cut ? Promise.reject(new StorageUnavailableError('cut off')) : run());
  const proxy: Storage = {
    mode: storage.mode,
    query: (sql, params, lane) => guard(() => storage.query(sql, params, lane)),
    queryLines: (sql, params, lane) => guard(() => storage.queryLines(sql, params, lane)),
    command: (sql, params, lane) => guard(() => storage.command(sql, params, lane)),
    insert: (...args) => guard(() => storage.insert(...args)),
    stream: (...args) => storage.stream(...args),
    openSandbox: (limits) => storage.openSandbox(limits),
    forgetDatabase: () => storage.forgetDatabase(),
    close: async () => {},
  };
  return { storage: proxy, cut: () => (cut = true) };
}

describe('the lease', () => {
  test('four contenders starting at once: one holds, the same one, and never two', async () => {
    const name = uniqueName('contended');
    const leases = [0, 1, 2, 3].map(() => lease(name));
    await Promise.all(leases.map((l) => l.start()));
    const holders = await watch(leases, 3 * LEASE_MS);
    expect(holders).toHaveLength(1);
    await Promise.all(leases.map((l) => l.stop()));
  });

  test('a holder cut off from storage stops before another takes over', async () => {
    const name = uniqueName('cut');
    const cutOff = severable();
    const first = lease(name, cutOff.storage);
    await first.start();
    expect(first.holds()).toBe(true);
    const second = lease(name);
    await second.start();
    expect(second.holds()).toBe(false);
    const cutAt = performance.now();
    cutOff.cut();
    let firstStoppedAt = 0;
    first.onChange((held) => (held ? undefined : (firstStoppedAt = performance.now())));
    let secondStartedAt = 0;
    second.onChange((held) => (held ? (secondStartedAt = performance.now()) : undefined));
    const holders = await watch([first, second], 3 * LEASE_MS);
    expect(holders).toEqual([0, 1]);
    expect(firstStoppedAt).toBeGreaterThan(0);
    expect(secondStartedAt).toBeGreaterThan(firstStoppedAt);
    console.log(`lease ${LEASE_MS} ms: holder cut off at 0, stopped at ${Math.round(firstStoppedAt - cutAt)} ms, the other took over at ${Math.round(secondStartedAt - cutAt)} ms`);
    await first.stop();
    await second.stop();
  });

  test('a holder that stops releases the lease: another takes it at its next look', async () => {
    const name = uniqueName('released');
    const first = lease(name);
    await first.start();
    const second = lease(name);
    await second.start();
    expect(first.holds()).toBe(true);
    await first.stop();
    expect(first.holds()).toBe(false);
    const stoppedAt = performance.now();
    await eventually('the other holds the lease', async () => second.holds(), 2 * LEASE_MS);
    console.log(`lease ${LEASE_MS} ms: released, taken over ${Math.round(performance.now() - stoppedAt)} ms later`);
    await second.stop();
  });
});
