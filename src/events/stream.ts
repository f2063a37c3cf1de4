import type { Event } from './model';

/** Equality filters of `GET /events/stream`; absent ones match everything. */
export interface StreamFilters {
  type?: string;
  event?: string;
  userId?: string;
}

export interface EventStreamOptions {
  /** Open streams one key may hold; the next one is refused (429). */
  maxConnectionsPerKey: number;
  /** Bytes queued for one stream, at most; events beyond them are dropped and counted. */
  bufferBytes: number;
  /** A comment is sent after this long without anything else, so proxies and clients see the stream alive. */
  heartbeatMs: number;
}

/** Why the service ended a stream, sent as its last message. */
export type EndReason = 'shutdown' | 'workspace deleted';

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(': keep-alive\n\n');
const message = (data: unknown, event?: string) => encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);

/** The stream is refused because its key holds the most streams it may. */
export class StreamLimitError extends Error {
  override readonly name = 'StreamLimitError';
}

/**
 * One open stream. Events are encoded as they are offered and queued until the client reads
 * them; the response body pulls from the queue only as fast as the connection drains (the
 * runtime stops pulling while the socket is full), so a slow reader's queue is the only memory
 * it holds, and that is bounded: an event that does not fit is dropped and counted, and a
 * `dropped` message with the count goes out in its place once the queue has room again.
 */
class Subscriber {
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private dropped = 0;
  private ending = false;
  private wake: (() => void) | undefined;
  private lastSent = performance.now();
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    readonly database: string,
    readonly workspaceId: string,
    private readonly filters: StreamFilters,
    private readonly bufferBytes: number,
    onClosed: () => void,
  ) {
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      onClosed();
    };
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          while (this.queue.length === 0 && !this.ending) await new Promise<void>((resolve) => (this.wake = resolve));
          const chunk = this.queue.shift();
          if (!chunk) {
            controller.close();
            return close();
          }
          this.queuedBytes -= chunk.byteLength;
          this.lastSent = performance.now();
          controller.enqueue(chunk);
        },
        cancel: close,
      },
      // Pull only when the runtime asks for more: nothing is buffered beyond the queue.
      { highWaterMark: 0 },
    );
    this.push(message({ filters }, 'ready'));
  }

  /** Bytes waiting for the client, at most `bufferBytes` (plus one short notice). */
  get buffered(): number {
    return this.queuedBytes;
  }

  offer(events: readonly Event[]): void {
    if (this.ending) return;
    for (const e of events) {
      if (!this.matches(e)) continue;
      const chunk = message(e);
      if (this.queuedBytes + chunk.byteLength > this.bufferBytes) {
        this.dropped++;
        continue;
      }
      if (this.dropped > 0) {
        this.push(message({ dropped: this.dropped }, 'dropped'));
        this.dropped = 0;
      }
      this.push(chunk);
    }
  }

  /** A keep-alive comment when nothing was sent for `idleMs` and nothing waits. */
  heartbeat(idleMs: number): void {
    if (!this.ending && this.queue.length === 0 && performance.now() - this.lastSent >= idleMs) this.push(HEARTBEAT);
  }

  /** Sends what is queued, then an `end` message, and closes. */
  end(reason: EndReason): void {
    if (this.ending) return;
    this.push(message({ reason }, 'end'));
    this.ending = true;
    this.wake?.();
  }

  private matches(e: Event): boolean {
    const f = this.filters;
    return (f.type === undefined || e.type === f.type) && (f.event === undefined || e.event === f.event) && (f.userId === undefined || e.userId === f.userId);
  }

  private push(chunk: Uint8Array): void {
    this.queue.push(chunk);
    this.queuedBytes += chunk.byteLength;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * The live streams of stored events (`GET /events/stream`). The ingest buffer announces each
 * committed insert (as it does to the webhooks); each stream of that workspace takes the events
 * its filters match. Streams are counted per key (by the key's hash) and end when their
 * workspace is deleted or the service stops.
 */
export class EventStreams {
  private readonly subscribers = new Set<Subscriber>();
  private readonly perKey = new Map<string, number>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly options: EventStreamOptions) {
    this.timer = setInterval(() => {
      for (const s of this.subscribers) s.heartbeat(options.heartbeatMs);
    }, options.heartbeatMs);
    this.timer.unref();
  }

  /** Opens a stream for the holder of the key hashed `keyHash`; throws StreamLimitError over the limit. */
  open(keyHash: string, workspace: { workspaceId: string; databaseName: string }, filters: StreamFilters): ReadableStream<Uint8Array> {
    const held = this.perKey.get(keyHash) ?? 0;
    if (held >= this.options.maxConnectionsPerKey) {
      throw new StreamLimitError(`this key holds ${held} open streams, the most it may; close one first`);
    }
    this.perKey.set(keyHash, held + 1);
    const subscriber = new Subscriber(workspace.databaseName, workspace.workspaceId, filters, this.options.bufferBytes, () => {
      this.subscribers.delete(subscriber);
      const left = (this.perKey.get(keyHash) ?? 1) - 1;
      if (left === 0) this.perKey.delete(keyHash);
      else this.perKey.set(keyHash, left);
    });
    this.subscribers.add(subscriber);
    return subscriber.body;
  }

  /** Events just committed to `database`, in acceptance order. Quick: it runs on the ingest path. */
  committed(database: string, events: readonly Event[]): void {
    for (const s of this.subscribers) if (s.database === database) s.offer(events);
  }

  /** Whether a stream is open on `database` (else `committed` may be skipped). */
  listensTo(database: string): boolean {
    for (const s of this.subscribers) if (s.database === database) return true;
    return false;
  }

  /** Ends the streams of workspaces no longer among `live` (deleted here or by another process). */
  retainWorkspaces(live: (workspaceId: string) => boolean): void {
    for (const s of this.subscribers) if (!live(s.workspaceId)) s.end('workspace deleted');
  }

  /** Open streams, and the bytes queued for them in all (for tests and operators). */
  stats(): { streams: number; bufferedBytes: number } {
    let bufferedBytes = 0;
    for (const s of this.subscribers) bufferedBytes += s.buffered;
    return { streams: this.subscribers.size, bufferedBytes };
  }

  /** Ends every stream, so that in-flight requests can finish at shutdown. */
  close(): void {
    clearInterval(this.timer);
    for (const s of this.subscribers) s.end('shutdown');
  }
}
