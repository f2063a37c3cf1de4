import type { Logger } from '../log';
import { identifier, type Storage } from '../storage/storage';

/** Looks at a move whose rows have not arrived yet, at most: then the full re-read takes over. */
const MAX_MISSES = 20;

/** What a counter counts the changes of: each has its own readers. */
export type ChangeScope = 'workspaces' | 'webhooks';

/**
 * A change counter in the metadata database: a process that changes workspaces and keys (or
 * webhooks) inserts a row of that scope, every process reads the scope's count every fraction of
 * a second and re-reads the metadata only when it moved. Cheap to poll (a count over a table of the day's changes, kept by a TTL), so a
 * change reaches the other processes within one poll interval plus one reload.
 */
export class ChangeCounter {
  private readonly table: string;
  private seen: string | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;

  constructor(
    private readonly storage: Storage,
    metaDatabase: string,
    private readonly scope: ChangeScope,
    private readonly log: Logger,
  ) {
    this.table = `${identifier(metaDatabase)}.metadata_changes`;
  }

  /** Records a change (after its rows are written), for the other processes to notice. */
  bump(version: number): Promise<void> {
    return this.storage.command(`INSERT INTO ${this.table} (scope, version) VALUES ({scope:String}, {version:UInt64})`, { scope: this.scope, version });
  }

  /**
   * Calls `changed` whenever the counter moved since the last look, every `intervalMs`. The count
   * goes with the highest version: versions come from several processes' clocks, so a change
   * may carry a lower version than one already seen, but it always adds a row.
   *
   * `changed` gets the highest version announced and answers whether the re-read covered it. On
   * a cluster the counter's row can reach this node before the changed rows do (tables replicate
   * independently): then the move is looked at again at the next look, a few times at most
   * (the periodic full re-read covers the rest).
   */
  watch(intervalMs: number, changed: (latestVersion: bigint) => Promise<boolean>): void {
    let misses = 0;
    const look = async () => {
      if (this.polling) return;
      this.polling = true;
      try {
        const [row] = await this.storage.query(
          `SELECT count() AS n, toString(max(version)) AS v FROM ${this.table} WHERE scope = {scope:String}`,
          { scope: this.scope },
          'read',
        );
        const now = `${row?.n}:${row?.v}`;
        // Marked seen only once the re-read succeeded and covered the change: otherwise it is
        // tried again at the next look.
        if (this.seen !== undefined && now !== this.seen) {
          const covered = await changed(BigInt(String(row?.v ?? '0')));
          if (!covered && ++misses < MAX_MISSES) return;
        }
        misses = 0;
        this.seen = now;
      } catch (err) {
        this.log.warn('reading the metadata change counter failed', { scope: this.scope, err });
      } finally {
        this.polling = false;
      }
    };
    void look();
    this.timer = setInterval(() => void look(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
