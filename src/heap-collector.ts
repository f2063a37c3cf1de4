import type { Logger } from './log';

/** What the collector reads of the process, and how it collects: the runtime's, but for its tests. */
export interface HeapRuntime {
  /** The process's resident memory, in bytes. */
  residentBytes(): number;
  /** The JavaScript heap in use (its objects and the buffers it owns), in bytes. */
  heapBytes(): number;
  /** Collects the heap at once, whole. */
  collect(): void;
}

export interface HeapCollectorOptions {
  /** The soft limit on resident memory, in bytes (MEMORY_SOFT_LIMIT_MB); 0 turns the collector off. */
  limitBytes: number;
  /** Told of each collection and how long it took (for metrics). */
  onCollected?: (seconds: number) => void;
}

/** How often resident memory is read. */
const CHECK_EVERY_MS = 100;
/** A collection stops the main thread (about 70 ms under batched ingest): at most one in this time. */
const MIN_GAP_MS = 500;
/**
 * And at most a sixth of the main thread's time goes to them: after a pause of `p` ms, none for
 * 5 × `p` ms (under batched ingest the pauses are 55 to 80 ms, so the 500 ms rule sets the pace).
 * Memory past the limit that collecting does not give back (a profiler's, with a heap that grows
 * fast) would otherwise have collections take a quarter of the thread.
 */
const GAP_PER_PAUSE = 5;
/** Heap grown since the last collection, at least, for another to be worth its pause. */
const MIN_HEAP_GROWTH_BYTES = 32 * 1024 * 1024;

/**
 * A soft limit on the process's resident memory, as Go's GOMEMLIMIT is: past it, the JavaScript
 * heap is collected at once instead of when the runtime's own rules would. Those rules size the
 * heap by the machine's memory, so under batched ingest dead request bodies, parsed events and
 * their rows piled up by several hundred MiB between collections (the process's peak passed
 * 1.2 GiB on a machine of 24 GiB; docs/performance.md#memory-under-batched-ingest-2026-11-29).
 * Nothing is collected until the heap has grown by 32 MiB since the last collection: memory held
 * elsewhere, such as the engine's, is not the heap's to give back.
 */
export class HeapCollector {
  private timer: ReturnType<typeof setInterval> | undefined;
  /** When the next collection may be made. */
  private nextAt = -Infinity;
  private heapAfterLast = 0;

  constructor(
    private readonly runtime: HeapRuntime,
    private readonly options: HeapCollectorOptions,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Starts checking (nothing happens when the limit is 0). */
  start(): void {
    if (this.options.limitBytes <= 0 || this.timer) return;
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check: collects when resident memory is past the limit and the heap has grown enough since the last collection. */
  check(): boolean {
    const at = this.now();
    if (at < this.nextAt) return false;
    if (this.runtime.residentBytes() < this.options.limitBytes) return false;
    const heap = this.runtime.heapBytes();
    if (heap - this.heapAfterLast < MIN_HEAP_GROWTH_BYTES) return false;
    this.runtime.collect();
    const end = this.now();
    this.nextAt = end + Math.max(MIN_GAP_MS, GAP_PER_PAUSE * (end - at));
    this.heapAfterLast = this.runtime.heapBytes();
    this.options.onCollected?.((end - at) / 1000);
    this.log.debug('memory past its soft limit: the heap was collected', { heapBefore: heap, heapAfter: this.heapAfterLast, ms: Math.round(end - at) });
    return true;
  }
}

/**
 * The running runtime's, or undefined where it cannot collect on demand (Deno runs without the
 * collector: its heap is V8's, sized by its own flags).
 */
export function currentHeapRuntime(): HeapRuntime | undefined {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (!bun) return undefined;
  return {
    residentBytes: () => process.memoryUsage.rss(),
    heapBytes: () => process.memoryUsage().heapUsed,
    collect: () => bun.gc(true),
  };
}
