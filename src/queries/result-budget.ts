import { ByteBudget } from '../http/body-budget';
import { RETRY_AFTER_SECONDS, unavailable } from '../http/problem';
import { StorageQueryError } from '../storage/storage';

/** The answer of a request that finds no room for its results. */
const full = () => unavailable('the service holds as many query results as it may (QUERY_RESULT_BYTES_IN_FLIGHT) for answers not yet read; try again shortly', RETRY_AFTER_SECONDS);

/** ClickHouse's TOO_MANY_ROWS_OR_BYTES, as the per-statement result limit tells it. */
const TOO_MANY_ROWS_OR_BYTES = 396;

/**
 * The result bytes the service holds for answers not yet written (docs/limits.md#memory): every
 * request's, at most `capacity` together (QUERY_RESULT_BYTES_IN_FLIGHT), and at most `perRequest`
 * of one request across its statements (QUERY_MAX_REQUEST_RESULT_BYTES). Results are charged as
 * they are read and given back as the answer is written, or when the client goes away; a request
 * over its own cap is the client's 400, one that finds the service holding too much for others
 * gets 503 with Retry-After. A client that reads nothing holds its charge for `stallMs` at most
 * (held-answer.ts cuts it off).
 */
export class ResultBudget {
  private readonly bytes: ByteBudget;
  readonly perRequest: number;

  constructor(
    capacity: number,
    perRequest: number,
    /** How long an answer may wait for its client to take more before it is cut off (HTTP_IDLE_TIMEOUT_MS). */
    private readonly stallMs: number,
  ) {
    this.bytes = new ByteBudget(capacity);
    // A request over the whole budget would still be granted it alone (ByteBudget's rule).
    this.perRequest = Math.min(perRequest, capacity);
  }

  /** Result bytes held now, all requests together. */
  get inUse(): number {
    return this.bytes.inUse;
  }

  /** What one request holds: charge its results to it, release them once written. */
  hold(): ResultHold {
    return new ResultHold(this.bytes, this.perRequest, this.stallMs);
  }
}

export class ResultHold {
  private held = 0;

  constructor(
    private readonly budget: ByteBudget,
    private readonly perRequest: number,
    /** How long the answer may wait for its client to take more before it is cut off. */
    readonly stallMs: number,
  ) {}

  /** Bytes this request holds now. */
  get bytes(): number {
    return this.held;
  }

  /** Charges `bytes` more of results, or throws (nothing charged) when they do not fit. */
  charge(bytes: number): void {
    if (this.held + bytes > this.perRequest) {
      throw new StorageQueryError(
        `the results of this request pass ${this.perRequest} bytes (QUERY_MAX_REQUEST_RESULT_BYTES), and were stopped there: select fewer rows or columns, send the statements in several requests, or use POST /queries/export. (TOO_MANY_ROWS_OR_BYTES)`,
        TOO_MANY_ROWS_OR_BYTES,
      );
    }
    if (!this.budget.tryAcquire(bytes)) {
      throw full();
    }
    this.held += bytes;
  }

  /**
   * Charges `bytes` of a stream that holds one chunk at a time (an export): no cap of the
   * request's, and room waited for (first come, first served) for `stallMs` at most, then 503.
   */
  async chargeWaiting(bytes: number): Promise<void> {
    if (!(await this.budget.acquire(bytes, this.stallMs))) {
      throw full();
    }
    this.held += bytes;
  }

  /** Gives back `bytes` (all it holds when not told): that much of the answer is written, or dropped. */
  release(bytes = this.held): void {
    const given = Math.min(bytes, this.held);
    this.held -= given;
    this.budget.release(given);
  }
}
