import type { Cursor } from './webhook-records';

/**
 * Saves cursors right after their deliveries, one insert at a time: cursors that arrive while an
 * insert is running go together in the next one. An elected owner saves each webhook's cursor
 * before that webhook's next send; with many webhooks delivering at once this keeps the inserts
 * (and the parts ClickHouse must merge) to one at a time rather than one per delivery.
 */
export class CursorBatcher {
  private next: { cursors: Map<string, Cursor>; done: Promise<void> } | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly write: (cursors: ReadonlyMap<string, Cursor>) => Promise<void>) {}

  /** Resolves once an insert holding this cursor (or a later one of the same webhook) is stored. */
  save(uuid: string, cursor: Cursor): Promise<void> {
    if (!this.next) {
      const cursors = new Map<string, Cursor>();
      const done = this.running.then(
        () => this.flush(cursors),
        () => this.flush(cursors),
      );
      this.next = { cursors, done };
      this.running = done.catch(() => {});
    }
    this.next.cursors.set(uuid, cursor);
    return this.next.done;
  }

  private flush(cursors: Map<string, Cursor>): Promise<void> {
    // From here on, new cursors wait for the insert after this one.
    this.next = undefined;
    return this.write(cursors);
  }
}
