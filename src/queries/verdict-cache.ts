/**
 * Statements that passed the guard, so that one repeated (a dashboard's) skips the checks: the
 * canonical statement by workspace database and exact text (or another verdict on the statement,
 * `T`). A verdict depends on which databases exist, so the cache is cleared whenever they may
 * have changed, and no verdict is older than `maxAgeMs` in any case.
 */
export class VerdictCache<T = string> {
  private readonly verdicts = new Map<string, { statement: T; at: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  get(database: string, sql: string): T | undefined {
    const key = `${database}\u0000${sql}`;
    const hit = this.verdicts.get(key);
    if (!hit) return undefined;
    if (performance.now() - hit.at > this.maxAgeMs) {
      this.verdicts.delete(key);
      return undefined;
    }
    return hit.statement;
  }

  set(database: string, sql: string, statement: T): void {
    // Oldest first: a Map keeps insertion order.
    if (this.verdicts.size >= this.maxEntries) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(`${database}\u0000${sql}`, { statement, at: performance.now() });
  }

  clear(): void {
    this.verdicts.clear();
  }
}
