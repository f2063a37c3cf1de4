import { identifier, type Storage } from '../storage/storage';

/** The lease as every process reads it from the metadata database. */
export interface LeaseState {
  /** The highest term claimed so far (0: never claimed). */
  term: number;
  /** The winner of that term: its earliest claim (server time, then holder id), the same for every reader. */
  holder: string | undefined;
  /** When the winner first claimed the term, microseconds (server clock); repeated on its renewals. */
  claimedMicros: bigint;
  /** When the winner's lease runs out, milliseconds (server clock); its latest row says. */
  expiresMs: number;
  /** The latest expiry of any holder of an earlier term: a new winner waits for it. */
  olderExpiresMs: number;
  /** The server's clock at the read, milliseconds. */
  nowMs: number;
}

/** The longest lease any process may hold (WEBHOOK_LEASE_MS's bound): older rows cannot be live. */
const MAX_LEASE_MS = 600_000;

/**
 * The rows of the `leases` table. ClickHouse has no transactions, so a lease is a log of inserts
 * (claims and renewals) and every process reads the same verdict from it: the winner of a term
 * is its earliest claim, by the server's `claimedAt`, then by holder id.
 */
export class LeaseRecords {
  private readonly table: string;
  private readonly readSettings: string;
  private readonly insertSettings: string;

  /**
   * On a cluster every replica of the metadata must agree on what was inserted in which order:
   * inserts wait for a quorum of replicas and reads see every quorum insert.
   */
  constructor(
    private readonly storage: Storage,
    metaDatabase: string,
    cluster: boolean,
  ) {
    this.table = `${identifier(metaDatabase)}.leases`;
    this.readSettings = cluster ? ' SETTINGS select_sequential_consistency = 1' : '';
    this.insertSettings = cluster ? ` SETTINGS insert_quorum = 'auto', insert_quorum_parallel = 0` : '';
  }

  async read(name: string): Promise<LeaseState> {
    const rows = await this.storage.query(
      `SELECT term, holder, toString(toUnixTimestamp64Micro(min(claimedAt))) AS claimed,
         toUnixTimestamp64Milli(argMax(expiresAt, renewedAt)) AS expiresMs, toUnixTimestamp64Milli(now64(3)) AS nowMs
       FROM ${this.table}
       WHERE name = {name:String}
         AND (term = (SELECT max(term) FROM ${this.table} WHERE name = {name:String})
              OR renewedAt >= subtractMilliseconds(now64(6), {maxLeaseMs:UInt32}))
       GROUP BY term, holder${this.readSettings}`,
      { name, maxLeaseMs: MAX_LEASE_MS },
      'write',
    );
    let term = 0;
    for (const r of rows) term = Math.max(term, Number(r.term));
    let winner: (typeof rows)[number] | undefined;
    let olderExpiresMs = 0;
    let nowMs = Date.now();
    for (const r of rows) {
      nowMs = Number(r.nowMs);
      if (Number(r.term) < term) {
        olderExpiresMs = Math.max(olderExpiresMs, Number(r.expiresMs));
        continue;
      }
      const claimed = BigInt(String(r.claimed));
      const best = winner && BigInt(String(winner.claimed));
      if (!winner || claimed < best! || (claimed === best && String(r.holder) < String(winner.holder))) winner = r;
    }
    if (rows.length === 0) {
      const [now] = await this.storage.query('SELECT toUnixTimestamp64Milli(now64(3)) AS nowMs', {}, 'write');
      nowMs = Number(now!.nowMs);
    }
    return {
      term,
      holder: winner && String(winner.holder),
      claimedMicros: winner ? BigInt(String(winner.claimed)) : 0n,
      expiresMs: winner ? Number(winner.expiresMs) : 0,
      olderExpiresMs,
      nowMs,
    };
  }

  /** A claim of `term`, timed by the server's clock. */
  claim(name: string, term: number, holder: string, leaseMs: number): Promise<void> {
    return this.storage.command(
      `INSERT INTO ${this.table} (name, term, holder, claimedAt, renewedAt, expiresAt)${this.insertSettings}
       SELECT {name:String}, {term:UInt64}, {holder:String}, now64(6), now64(6), addMilliseconds(now64(6), {leaseMs:UInt32})`,
      { name, term, holder, leaseMs },
    );
  }

  /** A renewal (or, with `leaseMs` 0, a release) of the term `holder` won, keeping its claim time. */
  renew(name: string, term: number, holder: string, claimedMicros: bigint, leaseMs: number): Promise<void> {
    return this.storage.command(
      `INSERT INTO ${this.table} (name, term, holder, claimedAt, renewedAt, expiresAt)${this.insertSettings}
       SELECT {name:String}, {term:UInt64}, {holder:String}, fromUnixTimestamp64Micro({claimed:Int64}, 'UTC'), now64(6), addMilliseconds(now64(6), {leaseMs:UInt32})`,
      { name, term, holder, claimed: claimedMicros.toString(), leaseMs },
    );
  }
}
