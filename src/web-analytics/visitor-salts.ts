import { randomBytes } from 'node:crypto';
import { identifier, jsonLines, type Storage } from '../storage/storage';
import { toEngineDateTime } from '../timestamps';

const DAY_MS = 86_400_000;

/**
 * The daily salts of cookieless visitor ids, kept in the metadata database (`visitor_salts`) so
 * that a restart, or another process on the same ClickHouse, gives a visitor the same id all day.
 * The first to need a day's salt writes a random one; each then takes the earliest written, so
 * processes that raced agree. Once a day has its salt, older ones are deleted: a past day's ids
 * can no longer be worked out from an address and a user agent.
 */
export class VisitorSalts {
  private current: { day: string; salt: Promise<string> } | undefined;
  private readonly meta: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
    private readonly onCluster: string,
  ) {
    this.meta = identifier(metaDatabase);
  }

  /** The salt of the UTC day of `nowMs`. */
  saltOf(nowMs: number): Promise<string> {
    const day = new Date(Math.floor(nowMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    if (this.current?.day !== day) {
      const salt = this.load(day);
      this.current = { day, salt };
      // A failure is not remembered: the next event tries again.
      salt.catch(() => this.current?.salt === salt && (this.current = undefined));
    }
    return this.current.salt;
  }

  private async load(day: string): Promise<string> {
    const stored = await this.read(day);
    if (stored !== undefined) return stored;
    const row = { day, salt: randomBytes(32).toString('hex'), createdAt: toEngineDateTime(BigInt(Date.now()) * 1000n) };
    await this.storage.insert(this.metaDatabase, 'visitor_salts', jsonLines([row]));
    await this.storage.command(`ALTER TABLE ${this.meta}.visitor_salts ${this.onCluster} DELETE WHERE day < {day:Date}`, { day }, 'write');
    return (await this.read(day)) ?? row.salt;
  }

  private async read(day: string): Promise<string | undefined> {
    const [row] = await this.storage.query(
      `SELECT argMin(salt, (createdAt, salt)) AS salt, count() AS n FROM ${this.meta}.visitor_salts WHERE day = {day:Date}`,
      { day },
      'write',
    );
    return Number(row?.n) > 0 ? String(row!.salt) : undefined;
  }
}
