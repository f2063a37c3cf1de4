/** Answers kept at most, of every workspace: the oldest kept goes first. */
const MAX_ANSWERS = 1000;
/** An answer longer than this (its JSON, in characters) is not kept. */
const MAX_ANSWER_CHARS = 256 * 1024;

/** A tile's last answer: when it was asked, and the version of its database's events then. */
export interface KeptAnswer {
  answer: unknown;
  /** When it was asked (ms since the epoch): it holds the events loaded before then. */
  at: number;
  version: number;
}

/**
 * Tiles' last answers, by database and question, for two uses:
 * - **Current answers**: an insight's answer is answered again without a statement while its
 *   workspace's events have not changed (`current`), so opening a dashboard again (or its refresh)
 *   asks the engine only for what may have changed. What an insight reads (`events_with_persons`)
 *   changes when events are loaded (the links they carry are resolved with them) and when a
 *   person's events are erased: `changed` is told of both. Anything else that changes it
 *   unannounced (rows removed by the retention TTL, relative ranges moving with the clock) shows
 *   within `currentMs`, the longest an answer counts as current; 0 keeps nothing (a ClickHouse
 *   server's events are loaded and erased by other processes too, unannounced).
 * - **Earlier answers**: a dashboard opened on a site whose events keep arriving is drawn at once
 *   from its tiles' last answers (`last`), marked with when they were asked, while the current
 *   ones are computed. They go when a person's events are erased or the workspace is removed
 *   (`withdraw`): an answer computed from erased events is not shown again, nor one of a removed
 *   workspace to a later one of the same database name.
 *
 * An answer is kept with the version read before it was asked, so one asked while events were
 * loaded is kept (as an earlier answer) but is not current, and one asked before an erasure is not
 * kept at all.
 */
export class TileAnswerCache {
  private readonly versions = new Map<string, number>();
  /** By database, the version its last erasure made: answers asked before it are not kept. */
  private readonly erasures = new Map<string, number>();
  /** By database and question (a database name holds no newline); a Map keeps insertion order, oldest first. */
  private readonly answers = new Map<string, KeptAnswer>();

  constructor(private readonly currentMs: number) {}

  /** Events were loaded into `database`: its kept answers are no longer current. */
  changed(database: string): void {
    this.versions.set(database, this.version(database) + 1);
  }

  /**
   * Events of `database` were erased (a person's), or all of them (its workspace removed): its
   * answers are forgotten, and none asked before now is kept (one still being answered).
   */
  withdraw(database: string): void {
    this.changed(database);
    this.erasures.set(database, this.version(database));
    this.forget(database);
  }

  /** A number that changes whenever `database`'s events change. */
  version(database: string): number {
    return this.versions.get(database) ?? 0;
  }

  /** The answer kept for `question` of `database` if the events are as they were when it was asked, and it is recent enough. */
  current(database: string, question: string, now: number): KeptAnswer | undefined {
    const kept = this.last(database, question);
    return kept !== undefined && kept.version === this.version(database) && now - kept.at < this.currentMs ? kept : undefined;
  }

  /** The last answer kept for `question` of `database`, current or not. */
  last(database: string, question: string): KeptAnswer | undefined {
    return this.answers.get(`${database}\n${question}`);
  }

  /** Keeps `answer`, asked at `at` when `database` was at `version`, unless a later one is kept or it is long. */
  keep(database: string, question: string, version: number, answer: unknown, at: number): void {
    const key = `${database}\n${question}`;
    const kept = this.answers.get(key);
    if (this.currentMs === 0 || version < (this.erasures.get(database) ?? 0) || (kept !== undefined && kept.at > at)) return;
    if (JSON.stringify(answer).length > MAX_ANSWER_CHARS) return;
    this.answers.delete(key);
    this.answers.set(key, { answer, at, version });
    if (this.answers.size > MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
  }

  private forget(database: string): void {
    for (const key of this.answers.keys()) if (key.startsWith(`${database}\n`)) this.answers.delete(key);
  }
}
