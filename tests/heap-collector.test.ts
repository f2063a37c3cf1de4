import { afterAll, describe, expect, test } from 'bun:test';
import { HeapCollector, type HeapRuntime } from '../src/heap-collector';
import { silentLogger } from '../src/log';
import { SERVED_BY_DENO } from './helpers/deno-service';
import { parseExposition, sampleValue } from './helpers/exposition';
import { eventually } from './helpers/eventually';
import { sendEvents, startTestService, type TestService } from './helpers/test-service';

const MIB = 1024 * 1024;

/** A process whose memory the test sets: collecting gives the heap back to `live`. */
function processOf(resident: number, heap: number, live: number) {
  const state = { resident, heap, live, collections: 0 };
  const runtime: HeapRuntime = {
    residentBytes: () => state.resident,
    heapBytes: () => state.heap,
    collect: () => {
      state.collections++;
      state.resident -= state.heap - state.live;
      state.heap = state.live;
    },
  };
  return { state, runtime };
}

describe('HeapCollector', () => {
  const clock = { now: 0 };
  const collector = (runtime: HeapRuntime, limitMib: number, collected: number[] = []) =>
    new HeapCollector(runtime, { limitBytes: limitMib * MIB, onCollected: (s) => collected.push(s) }, silentLogger, () => clock.now);

  test('under the limit nothing is collected, however large the heap', () => {
    const { state, runtime } = processOf(700 * MIB, 500 * MIB, 50 * MIB);
    expect(collector(runtime, 800).check()).toBe(false);
    expect(state.collections).toBe(0);
  });

  test('past the limit the heap is collected, and the collection is told with its time', () => {
    const { state, runtime } = processOf(1100 * MIB, 400 * MIB, 80 * MIB);
    const collected: number[] = [];
    expect(collector(runtime, 800, collected).check()).toBe(true);
    expect(state.collections).toBe(1);
    expect(state.resident).toBe(780 * MIB);
    expect(collected).toHaveLength(1);
  });

  test('collections take at most a sixth of the time: after a pause of 200 ms, none for 1,000 ms', () => {
    clock.now = 50_000;
    const { state, runtime } = processOf(1400 * MIB, 400 * MIB, 80 * MIB);
    // Each collection pauses 200 ms and gives nothing back: the memory past the limit is not the heap's.
    const slow: HeapRuntime = {
      ...runtime,
      collect: () => {
        runtime.collect();
        clock.now += 200;
        state.resident = 1400 * MIB;
      },
    };
    const heapCollector = collector(slow, 800);
    expect(heapCollector.check()).toBe(true);
    state.heap += 200 * MIB;
    clock.now += 999;
    expect(heapCollector.check()).toBe(false);
    clock.now += 1;
    expect(heapCollector.check()).toBe(true);
    expect(state.collections).toBe(2);
  });

  test('at most one collection in 500 ms, and none until the heap has grown by 32 MiB since the last', () => {
    clock.now = 10_000;
    const { state, runtime } = processOf(1100 * MIB, 400 * MIB, 80 * MIB);
    // Past the limit through memory that is not the heap's (the engine's, say).
    state.resident = 1000 * MIB + 400 * MIB;
    const heapCollector = collector(runtime, 800);
    expect(heapCollector.check()).toBe(true);
    clock.now += 100;
    state.heap += 100 * MIB;
    expect(heapCollector.check()).toBe(false);
    clock.now += 500;
    state.heap = state.live + 31 * MIB;
    expect(heapCollector.check()).toBe(false);
    state.heap = state.live + 32 * MIB;
    expect(heapCollector.check()).toBe(true);
    expect(state.collections).toBe(2);
  });
});

describe('MEMORY_SOFT_LIMIT_MB in a running service', () => {
  let svc: TestService | undefined;
  afterAll(() => svc?.stop());

  test('past the limit the service collects its heap and counts it in /metrics; Deno runs without the collector', async () => {
    // 1 MiB: every check finds the process past it.
    svc = await startTestService({ MEMORY_SOFT_LIMIT_MB: '1' });
    const collections = async () => {
      const res = await svc!.request('GET', '/metrics', { key: svc!.privateKey });
      expect(res.status).toBe(200);
      const families = parseExposition(await res.text());
      return { count: sampleValue(families, 'analytics_heap_collections_total', {}), seconds: sampleValue(families, 'analytics_heap_collection_seconds_total', {}) };
    };
    if (SERVED_BY_DENO) {
      for (let i = 0; i < 5; i++) await sendEvents(svc, [{ type: 'track', event: 'Heap Grown', userId: 'u' }]);
      expect(await collections()).toEqual({ count: 0, seconds: 0 });
      return;
    }
    // Batches leave their bodies, parsed events and rows behind: the heap grows past 32 MiB.
    const batch = Array.from({ length: 1000 }, (_, i) => ({ type: 'track', event: 'Heap Grown', userId: `u${i}`, properties: { text: 'x'.repeat(200), i } }));
    for (let i = 0; i < 40 && (await collections()).count === 0; i++) await sendEvents(svc, batch);
    await eventually('a collection counted', async () => (await collections()).count >= 1);
    expect((await collections()).seconds).toBeGreaterThan(0);
  });
});
