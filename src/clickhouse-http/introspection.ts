import type { Params } from '../storage/storage';
import { isCatalogTable, type Catalog, type CatalogScope } from './catalog';
import { clickhouseError, outside } from './errors';
import { isWord, nameOf, tokenize, type Token } from './statement-text';

/** A statement as it will run: rewritten when it asked about the workspace, with the parameters it now needs. */
export interface Rewritten {
  statement: string;
  params: Params;
}

/** The parameter that carries a table's name into a rewritten statement: the client's value, bound, never written in. */
const TABLE_PARAM = '_introspected_table';

/** `name` or `database.name` filling `tokens` exactly, as a statement names a table. */
function tableReference(tokens: readonly Token[]): { database: string | undefined; table: string } | undefined {
  if (tokens.length === 1 && nameOf(tokens[0])) return { database: undefined, table: nameOf(tokens[0])! };
  if (tokens.length === 3 && tokens[1]!.text === '.' && nameOf(tokens[0]) && nameOf(tokens[2])) return { database: nameOf(tokens[0]), table: nameOf(tokens[2])! };
  return undefined;
}

/** Tokens after the leading words `words` (each a word or a list of alternatives, `?` at the end for optional ones). */
function after(tokens: readonly Token[], words: ReadonlyArray<string>): Token[] | undefined {
  let i = 0;
  for (const word of words) {
    const optional = word.endsWith('?');
    const alternatives = word.replace(/\?$/, '').split('|');
    if (alternatives.some((alternative) => isWord(tokens[i], alternative))) i++;
    else if (!optional) return undefined;
  }
  return tokens.slice(i);
}

/** A LIKE filter (`LIKE 'x'`, `NOT ILIKE 'x'`) and a LIMIT as SHOW takes them, as a clause over `column`. */
function filter(statement: string, rest: readonly Token[], column: string): string {
  if (rest.length === 0) return '';
  const text = statement.slice(rest[0]!.start);
  return ['LIKE', 'ILIKE', 'NOT'].some((word) => isWord(rest[0], word)) ? ` WHERE ${column} ${text}` : ` ${text}`;
}

/**
 * The statements BI tools run on connecting, answered as a server would but over the workspace
 * alone: SHOW DATABASES, SHOW TABLES, DESCRIBE, EXISTS and SHOW CREATE TABLE become SELECTs over
 * the system tables, and those (system.databases, tables, columns, settings and their
 * information_schema views) become the workspace's rows (catalog.ts). Every statement that comes
 * out is judged by the guard like any other; anything else is left as it was.
 */
export class Introspection {
  constructor(private readonly catalog: Catalog) {}

  async rewrite(statement: string, scope: CatalogScope): Promise<Rewritten> {
    const shown = await this.asSelect(statement, scope.database);
    return { statement: await this.withCatalog(shown?.statement ?? statement, scope), params: shown?.params ?? {} };
  }

  /** SHOW, DESCRIBE and EXISTS as SELECTs over the system tables, or undefined for any other statement. */
  private async asSelect(statement: string, database: string): Promise<Rewritten | undefined> {
    const tokens = tokenize(statement).filter((token, i, all) => !(token.text === ';' && all.slice(i).every((t) => t.text === ';')));
    const databases = after(tokens, ['SHOW', 'DATABASES']);
    if (databases) return { statement: `SELECT name FROM system.databases${filter(statement, databases, 'name')}`, params: {} };
    const tables = after(tokens, ['SHOW', 'FULL?', 'TABLES']);
    if (tables) {
      const from = after(tables, ['FROM|IN']);
      const rest = from ? from.slice(1) : tables;
      if (from && nameOf(from[0]) !== database) throw outside(nameOf(from[0]) ?? from[0]?.text ?? '');
      return { statement: `SELECT name FROM system.tables${filter(statement, rest, 'name')}`, params: {} };
    }
    const described = tableReference(after(tokens, ['DESC|DESCRIBE', 'TABLE?']) ?? []);
    if (described) {
      await this.checkTable(described, database);
      return {
        statement: `SELECT name, type, default_kind AS default_type, default_expression, comment, compression_codec AS codec_expression, '' AS ttl_expression FROM system.columns WHERE table = {${TABLE_PARAM}:String} ORDER BY position`,
        params: { [TABLE_PARAM]: described.table },
      };
    }
    const created = tableReference(after(tokens, ['SHOW', 'CREATE', 'TABLE?']) ?? []);
    if (created) {
      await this.checkTable(created, database);
      return { statement: `SELECT create_table_query AS statement FROM system.tables WHERE name = {${TABLE_PARAM}:String}`, params: { [TABLE_PARAM]: created.table } };
    }
    const exists = tableReference(after(tokens, ['EXISTS', 'TEMPORARY?', 'TABLE?']) ?? []);
    if (exists) {
      if (exists.database !== undefined && exists.database !== database) throw outside(`${exists.database}.${exists.table}`);
      return { statement: `SELECT toUInt8(count()) AS result FROM system.tables WHERE name = {${TABLE_PARAM}:String}`, params: { [TABLE_PARAM]: exists.table } };
    }
    return undefined;
  }

  /** UNKNOWN_TABLE unless the workspace has the table; ACCESS_DENIED for another database's. */
  private async checkTable(reference: { database: string | undefined; table: string }, database: string): Promise<void> {
    if (reference.database !== undefined && reference.database !== database) throw outside(`${reference.database}.${reference.table}`);
    if (!(await this.catalog.tableNames(database)).has(reference.table)) throw clickhouseError('UNKNOWN_TABLE', `Table ${database}.${reference.table} does not exist`);
  }

  /**
   * The statement with each catalog table it names (`system.tables`, written in any quoting)
   * replaced by a CTE of the workspace's rows under the table's own name, so that `tables.name`
   * still reads; the statement becomes a subquery, so that the CTEs reach every part of a UNION.
   */
  private async withCatalog(statement: string, scope: CatalogScope): Promise<string> {
    const tokens = tokenize(statement);
    const used = new Map<string, string>();
    let text = '';
    let copied = 0;
    for (let i = 0; i + 2 < tokens.length; i++) {
      const qualified = `${nameOf(tokens[i])}.${nameOf(tokens[i + 2])}`;
      if (tokens[i + 1]!.text !== '.' || tokens[i - 1]?.text === '.' || !isCatalogTable(qualified)) continue;
      const name = nameOf(tokens[i + 2])!;
      if ((used.get(name) ?? qualified) !== qualified) throw clickhouseError('NOT_IMPLEMENTED', `${used.get(name)} and ${qualified} cannot be read in one statement here`);
      used.set(name, qualified);
      text += `${statement.slice(copied, tokens[i]!.start)}${name}`;
      copied = tokens[i + 2]!.end;
      i += 2;
    }
    if (used.size === 0) return statement;
    const last = tokens.findLast((token) => token.text !== ';')!;
    text += statement.slice(copied, Math.max(copied, last.end));
    const ctes = await Promise.all([...used].map(async ([name, qualified]) => `${name} AS (${await this.catalog.rows(qualified, scope)})`));
    return `WITH ${ctes.join(', ')} SELECT * FROM (${text})`;
  }
}
