import type { TestService } from './test-service';

/** POST /queries (with the private key unless told); answers status, body and the raw text. */
export async function runQueries(svc: Pick<TestService, 'request' | 'privateKey'>, queries: unknown, key = svc.privateKey): Promise<{ status: number; body: any; text: string }> {
  const res = await svc.request('POST', '/queries', { key, body: { queries } });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text };
}

/** The rows of a single statement; fails the test unless it answered 200. */
export async function rowsOf(svc: Pick<TestService, 'request' | 'privateKey'>, sql: string, key = svc.privateKey): Promise<any[]> {
  const { status, body } = await runQueries(svc, [sql], key);
  if (status !== 200) throw new Error(`${sql} answered ${status}: ${JSON.stringify(body)}`);
  return body.results[0].results;
}
