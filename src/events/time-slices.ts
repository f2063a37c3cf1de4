/**
 * Long work in slices of at most `sliceMs` of the event loop: `due()` says when a slice is used up
 * (checking the clock only every CHECK_EVERY calls: it is asked once a line of an import), and
 * `pause()` then lets every other request run before the next slice.
 */
export class TimeSlices {
  private static readonly CHECK_EVERY = 256;
  private calls = 0;
  private started = performance.now();

  constructor(private readonly sliceMs: number) {}

  due(): boolean {
    if (++this.calls % TimeSlices.CHECK_EVERY !== 0) return false;
    return performance.now() - this.started >= this.sliceMs;
  }

  /** Resolves after the event loop has run once (timers, sockets), then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise((resumed) => setImmediate(resumed));
    this.started = performance.now();
  }
}
