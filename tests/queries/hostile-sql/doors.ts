/**
 * The five doors through which a private key runs SQL, each sending a statement and reading its
 * whole answer (status, headers, body) as a client would: POST /queries, POST /queries/export,
 * ClickHouse's HTTP interface by GET and by POST, and a SQL tile of a dashboard.
 */
import type { DoorName } from './derivation';

export interface DoorStatement {
  sql: string;
  /** `{name:Type}` values and settings, as URL parameters (on /clickhouse only). */
  params?: Record<string, string>;
  settings?: Record<string, string>;
}

export interface Answer {
  status: number;
  /** Status, headers and body as text: where a canary is looked for. */
  text: string;
  /** Why the statement was not run, as the service words it (problem detail, ClickHouse message). */
  reason?: string;
  /** ClickHouse's error code, on /clickhouse. */
  clickhouseCode?: number;
}

async function answerOf(res: Response, readReason: (body: string) => string | undefined): Promise<Answer> {
  let body: string;
  try {
    body = await res.text();
  } catch (err) {
    // An export cut while it streams: the client sees an incomplete download.
    body = `(cut: ${(err as Error).message})`;
  }
  const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  const code = res.headers.get('x-clickhouse-exception-code');
  return {
    status: res.status,
    text: `${res.status}\n${headers}\n\n${body}`,
    reason: res.status === 200 ? undefined : readReason(body),
    ...(code ? { clickhouseCode: Number(code) } : {}),
  };
}

const problemDetail = (body: string): string | undefined => {
  try {
    return (JSON.parse(body) as { errors?: Array<{ detail?: string }>; detail?: string }).errors?.[0]?.detail ?? JSON.parse(body).detail;
  } catch {
    return body.slice(0, 200);
  }
};

const post = (url: string, key: string, path: string, body: unknown) =>
  fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

function clickhouseUrl(url: string, statement: DoorStatement, withQuery: boolean): string {
  const search = new URLSearchParams();
  if (withQuery) search.set('query', statement.sql);
  for (const [name, value] of Object.entries(statement.params ?? {})) search.set(`param_${name}`, value);
  for (const [name, value] of Object.entries(statement.settings ?? {})) search.set(name, value);
  const query = search.toString();
  return `${url}/clickhouse${query ? `?${query}` : ''}`;
}

/** Sends one statement through a door that takes one statement a request. */
export async function throughDoor(door: Exclude<DoorName, 'dashboard'>, url: string, key: string, statement: DoorStatement): Promise<Answer> {
  if (door === 'queries') return answerOf(await post(url, key, '/queries', { queries: [statement.sql] }), problemDetail);
  if (door === 'export') return answerOf(await post(url, key, '/queries/export', { query: statement.sql, format: 'ndjson' }), problemDetail);
  const auth = { authorization: `Basic ${btoa(`default:${key}`)}` };
  const res =
    door === 'clickhouse-get'
      ? await fetch(clickhouseUrl(url, statement, true), { headers: auth })
      : await fetch(clickhouseUrl(url, statement, false), { method: 'POST', headers: auth, body: statement.sql });
  return answerOf(res, (body) => body.replace(/^Code: \d+\. DB::Exception: /, '').slice(0, 300));
}

/** A call of the service's JSON API that must succeed; answers the parsed body. */
export async function callApi(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/**
 * A dashboard of SQL tiles, one per statement, answered in one call: the saved insights are
 * created once and replaced (PUT) for each batch of statements.
 */
export class DashboardDoor {
  private insightIds: string[] = [];
  private dashboardId: string | undefined;

  constructor(
    private readonly url: string,
    private readonly key: string,
    /** Tiles of the dashboard: the most statements one call answers. */
    readonly tiles = 50,
  ) {}

  private call(method: string, path: string, body?: unknown): Promise<any> {
    return callApi(this.url, this.key, method, path, body);
  }

  /** The answer of each statement's tile, in order (at most `tiles` statements). */
  async answer(statements: readonly DoorStatement[]): Promise<Answer[]> {
    const saved = (sql: string, i: number) => ({ name: `tile ${i}`, kind: 'sql', query: sql });
    for (const [i, statement] of statements.entries()) {
      if (i < this.insightIds.length) await this.call('PUT', `/insights/saved/${this.insightIds[i]}`, saved(statement.sql, i));
      else this.insightIds.push((await this.call('POST', '/insights/saved', saved(statement.sql, i))).id);
    }
    const tiles = statements.map((_, i) => ({ insightId: this.insightIds[i], x: 0, y: i, w: 12, h: 1 }));
    const dashboard = { name: 'Hostile SQL', tiles };
    if (this.dashboardId === undefined) this.dashboardId = (await this.call('POST', '/dashboards', dashboard)).id;
    else await this.call('PUT', `/dashboards/${this.dashboardId}`, dashboard);
    const res = await fetch(`${this.url}/dashboards/${this.dashboardId}/results`, { headers: { authorization: `Bearer ${this.key}` } });
    const text = await res.text();
    if (res.status !== 200) return statements.map(() => ({ status: res.status, text }));
    const { results } = JSON.parse(text) as { results: Array<{ result?: unknown; error?: { status: number; detail?: string; errors?: Array<{ detail?: string }> } }> };
    return results.map((tile) =>
      tile.error
        ? { status: tile.error.status, text: JSON.stringify(tile), reason: tile.error.errors?.[0]?.detail ?? tile.error.detail }
        : { status: 200, text: JSON.stringify(tile) },
    );
  }
}
