/**
 * The actor primitive: a bounded mailbox whose messages are handled one at a time, in order.
 * State owned by an actor is touched only by its handler, so it needs no locks.
 */

/** The mailbox is full; the caller should shed the work (429/503 with Retry-After). */
export class MailboxFullError extends Error {
  override readonly name = 'MailboxFullError';
}

/** The actor has been stopped and takes no more messages. */
export class ActorStoppedError extends Error {
  override readonly name = 'ActorStoppedError';
}

interface Envelope<M, R> {
  message: M;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export class Actor<M, R = void> {
  private readonly mailbox: Envelope<M, R>[] = [];
  private running = false;
  private stopped = false;
  private drained: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};

  constructor(
    private readonly handle: (message: M) => Promise<R>,
    private readonly capacity: number,
  ) {}

  /** Messages waiting, not counting the one being handled. */
  get pending(): number {
    return this.mailbox.length;
  }

  /** Queues a message; resolves with the handler's result. Throws at once when full or stopped. */
  ask(message: M): Promise<R> {
    if (this.stopped) return Promise.reject(new ActorStoppedError('actor is stopped'));
    if (this.mailbox.length >= this.capacity) return Promise.reject(new MailboxFullError('mailbox is full'));
    return new Promise<R>((resolve, reject) => {
      this.mailbox.push({ message, resolve, reject });
      if (!this.running) this.drain();
    });
  }

  /** True when no message is being handled or waiting. */
  get idle(): boolean {
    return !this.running;
  }

  /** Resolves when the mailbox has drained (at once when already idle). */
  whenIdle(): Promise<void> {
    return this.running ? this.drained : Promise.resolve();
  }

  /** Refuses new messages and resolves once the queued ones have been handled. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.whenIdle();
  }

  private async drain(): Promise<void> {
    this.running = true;
    this.drained = new Promise((r) => (this.markIdle = r));
    for (let env = this.mailbox.shift(); env; env = this.mailbox.shift()) {
      try {
        env.resolve(await this.handle(env.message));
      } catch (err) {
        env.reject(err);
      }
    }
    this.running = false;
    this.markIdle();
  }
}
