/**
 * Preloaded into a service process started with `clockAt` (tests/helpers/service-process.ts):
 * its wall clock (`Date.now()`, `new Date()`) starts at TEST_CLOCK_AT, milliseconds since 1970,
 * and runs on at the real pace. A test about data written at a known moment (a release's
 * fixture) so sees the service as it runs right after that moment, whichever day the test runs.
 * Timers and `performance.now()` are untouched: only what the service reads as the date moves.
 */
const at = Number(process.env.TEST_CLOCK_AT);
if (!Number.isFinite(at)) throw new Error(`TEST_CLOCK_AT must be milliseconds since 1970, not ${process.env.TEST_CLOCK_AT}`);

const RealDate = Date;
const offset = at - RealDate.now();

class ShiftedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return RealDate.now() + offset;
  }
}

globalThis.Date = ShiftedDate as DateConstructor;
