interface Task {
  start(): void;
}

/**
 * Runs tasks of many workspaces on `slots` shared slots, fairly: at most `perWorkspace` of one
 * workspace's tasks run at once, the rest of its tasks wait behind each other, and a free slot
 * goes to the waiting workspace served longest ago (one that has had nothing for a while first),
 * so one workspace's queue never stands in front of another's.
 */
export class FairScheduler {
  private free: number;
  private readonly running = new Map<string, number>();
  /** Waiting tasks by workspace. */
  private readonly queues = new Map<string, Task[]>();
  /** When each busy workspace last had a task started (a count of starts); idle ones are forgotten. */
  private readonly served = new Map<string, number>();
  private starts = 0;
  private onIdle: Array<() => void> = [];

  constructor(
    slots: number,
    private readonly perWorkspace: number,
  ) {
    this.free = slots;
  }

  /** Tasks that would still wait if `more` tasks came now, whatever their workspace. */
  waitingWith(more: number): number {
    return Math.max(0, this.waiting + more - this.free);
  }

  /** Tasks of `workspace` running now. */
  runningOf(workspace: string): number {
    return this.running.get(workspace) ?? 0;
  }

  /** Tasks of `workspace` waiting for a slot. */
  waitingOf(workspace: string): number {
    return this.queues.get(workspace)?.length ?? 0;
  }

  /** Tasks of every workspace waiting for a slot. */
  get waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  /** Resolves once no task runs or waits. */
  idle(): Promise<void> {
    if (this.running.size === 0 && this.queues.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.onIdle.push(resolve));
  }

  /** Runs `work` for `workspace` when its turn comes; answers what it answers. */
  schedule<T>(workspace: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const task: Task = {
        start: () => {
          work()
            .then(resolve, reject)
            .finally(() => this.finished(workspace));
        },
      };
      const queue = this.queues.get(workspace);
      if (queue) queue.push(task);
      else this.queues.set(workspace, [task]);
      this.pump();
    });
  }

  private finished(workspace: string): void {
    const n = this.runningOf(workspace) - 1;
    if (n > 0) this.running.set(workspace, n);
    else {
      this.running.delete(workspace);
      if (!this.queues.has(workspace)) this.served.delete(workspace);
    }
    this.free++;
    this.pump();
    if (this.running.size === 0 && this.queues.size === 0) for (const resolve of this.onIdle.splice(0)) resolve();
  }

  /** Starts waiting tasks while slots are free, taking workspaces in turn. */
  private pump(): void {
    while (this.free > 0) {
      const next = this.nextWorkspace();
      if (next === undefined) return;
      const queue = this.queues.get(next)!;
      const task = queue.shift()!;
      if (queue.length === 0) this.queues.delete(next);
      this.running.set(next, this.runningOf(next) + 1);
      this.served.set(next, this.starts++);
      this.free--;
      task.start();
    }
  }

  /** The workspace below its limit that was served longest ago. */
  private nextWorkspace(): string | undefined {
    let best: string | undefined;
    let bestServed = Infinity;
    for (const workspace of this.queues.keys()) {
      const served = this.served.get(workspace) ?? -1;
      if (this.runningOf(workspace) < this.perWorkspace && served < bestServed) {
        best = workspace;
        bestServed = served;
      }
    }
    return best;
  }
}
