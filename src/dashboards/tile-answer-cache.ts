/** Answers kept at most, of every workspace: the oldest kept goes first. */
const MAX_ANSWERS = 1000;
/** An answer longer than this (its JSON, in characters) is not kept. */
const MAX_ANSWER_CHARS = 256 * 1024;

interface Kept {
  answer: unknown;
  at: number;
}

/**
 * Insight tiles' answers, kept while their workspace's events have not changed, so that opening a
 * dashboard again (or its refresh) asks the engine only for what may have changed. What an insight
 * reads (`events_with_persons`) changes when events are loaded (the links they carry are resolved
 * with them) and when a person's events are erased: `changed` is told of both and forgets the
 * database's answers. Anything else that changes it unannounced (rows removed by the retention
 * TTL, relative ranges moving with the clock) shows within `maxAgeMs`, the longest an answer is kept.
 *
 * An answer is kept only if no change was told while it was being answered: `version` is read
 * before asking and `keep` compares it.
 */
export class TileAnswerCache {
  private readonly versions = new Map<string, number>();
  /** By database and question (a database name holds no newline); a Map keeps insertion order, oldest first. */
  private readonly answers = new Map<string, Kept>();

  constructor(private readonly maxAgeMs: number) {}

  /** The events of `database` changed (loaded, or erased): its answers are forgotten. */
  changed(database: string): void {
    this.versions.set(database, this.version(database) + 1);
    this.forget(database);
  }

  /** A number that changes whenever `database`'s events change. */
  version(database: string): number {
    return this.versions.get(database) ?? 0;
  }

  /** The answer kept for `question` of `database`, if it is younger than the maximum age. */
  get(database: string, question: string, now: number): unknown {
    const kept = this.answers.get(`${database}\n${question}`);
    return kept !== undefined && now - kept.at < this.maxAgeMs ? kept.answer : undefined;
  }

  /** Keeps `answer`, asked when `database` was at `version`, unless it changed since or the answer is long. */
  keep(database: string, question: string, version: number, answer: unknown, now: number): void {
    if (this.maxAgeMs === 0 || version !== this.version(database) || JSON.stringify(answer).length > MAX_ANSWER_CHARS) return;
    const key = `${database}\n${question}`;
    this.answers.delete(key);
    this.answers.set(key, { answer, at: now });
    if (this.answers.size > MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
  }

  /** Forgets `database`'s answers (its events changed, or its workspace was removed). */
  forget(database: string): void {
    for (const key of this.answers.keys()) if (key.startsWith(`${database}\n`)) this.answers.delete(key);
  }
}
