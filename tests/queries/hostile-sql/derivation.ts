/**
 * The machinery of the hostile-SQL grammar (grammar.ts): one derivation of one statement, from a
 * seeded random source. A production is a list of named, weighted alternatives; expanding it picks
 * one, records its name (so a breach can be traced to the productions that made it) and, past a
 * depth, keeps to the alternatives that do not recurse.
 */
import { seededRandom } from '../../helpers/seeded-random';

/** What the generator knows of the service it attacks. */
export interface Terrain {
  /** The attacking workspace's database, the victim's, the metadata database. */
  own: string;
  other: string;
  meta: string;
  /** DATA_DIR, and the canary file in it: absolute, and relative to the service's working directory. */
  dataDir: string;
  canaryFile: string;
  canaryFileFromCwd: string;
  /** Where INTO OUTFILE aims (outside DATA_DIR); nothing may appear there. */
  outfileDir: string;
}

/** The doors a statement can go through; parameters and URL settings exist on /clickhouse only. */
export type DoorName = 'queries' | 'export' | 'clickhouse-get' | 'clickhouse-post' | 'dashboard';

export type Alternative = {
  name: string;
  weight: number;
  /** Expands into more of the grammar without bound: left out past MAX_DEPTH. */
  recursive?: boolean;
  make: (d: Derivation) => string;
};

const MAX_DEPTH = 4;

export class Derivation {
  readonly random: () => number;
  /** The names of the alternatives picked, in order. */
  readonly productions: string[] = [];
  /** `{name:Type}` values (param_name= on /clickhouse). */
  readonly params: Record<string, string> = {};
  /** URL settings (on /clickhouse). */
  readonly settings: Record<string, string> = {};
  /** The statement spells DATA_DIR itself, so the path coming back is no breach. */
  knowsDataDir = false;
  /** Columns a table function's structure defines and the select list should read (ALIAS ones are not in `*`). */
  structureColumns: string[] = [];
  /** A row source without end (generateRandom) was used: the statement needs a LIMIT. */
  endless = false;
  private depth = 0;
  private names = 0;

  constructor(
    seed: number,
    readonly terrain: Terrain,
    readonly door: DoorName,
  ) {
    this.random = seededRandom(seed);
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  /** A fresh name for an alias, a CTE or a parameter. */
  fresh(prefix: string): string {
    return `${prefix}${++this.names}`;
  }

  get onClickHouse(): boolean {
    return this.door === 'clickhouse-get' || this.door === 'clickhouse-post';
  }

  /** One alternative of `production`, by weight, expanded. */
  expand(production: readonly Alternative[]): string {
    const allowed = this.depth >= MAX_DEPTH ? production.filter((alt) => !alt.recursive) : production;
    const choices = allowed.length > 0 ? allowed : production;
    let roll = this.random() * choices.reduce((sum, alt) => sum + alt.weight, 0);
    let chosen = choices[choices.length - 1]!;
    for (const alt of choices) {
      roll -= alt.weight;
      if (roll < 0) {
        chosen = alt;
        break;
      }
    }
    this.productions.push(chosen.name);
    this.depth++;
    try {
      return chosen.make(this);
    } finally {
      this.depth--;
    }
  }

  /** A keyword in a random case: ClickHouse reads keywords case-insensitively. */
  kw(word: string): string {
    const roll = this.random();
    if (roll < 0.8) return word;
    if (roll < 0.9) return word.toLowerCase();
    return [...word].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join('');
  }

  /** The space between two tokens: mostly a space, sometimes a comment of one of ClickHouse's three kinds. */
  sp(): string {
    if (!this.chance(0.06)) return ' ';
    return this.pick([' /* x */ ', " /* ' ; DROP */ ", ' /* a /* nested */ b */ ', ' -- c\n', " -- '\n", ' # c\n', ' #!c\n', '\n\t']);
  }
}

/** `text` as a ClickHouse string literal, its quotes escaped one of the two ways ClickHouse reads. */
export function stringLiteral(d: Derivation, text: string): string {
  const escaped = text.replaceAll('\\', '\\\\');
  return d.chance(0.5) ? `'${escaped.replaceAll("'", "''")}'` : `'${escaped.replaceAll("'", "\\'")}'`;
}
