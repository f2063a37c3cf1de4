import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { eventually } from '../helpers/eventually';
import { startTestService, type TestService } from '../helpers/test-service';

/**
 * The result bytes the service holds for answers (docs/limits.md#memory), with small limits so
 * that the bounds are met by small results: one request's across its statements, and every
 * request's together, held until the answer is written, also for a client that reads nothing.
 */
const MiB = 1024 * 1024;
/** About `mb` MB of JSONEachRow text: rows of 1,000 characters. */
const resultOf = (mb: number) => `SELECT repeat('a', 1000) AS r FROM numbers(${mb * 1000})`;

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    QUERY_MAX_RESULT_BYTES: String(64 * MiB),
    QUERY_MAX_REQUEST_RESULT_BYTES: String(64 * MiB),
    QUERY_RESULT_BYTES_IN_FLIGHT: String(64 * MiB),
    // The cut-off of a client that reads nothing; long enough for the event loop's pauses while
    // 60 MB results are parsed, which would cut the requests being answered too.
    HTTP_IDLE_TIMEOUT_MS: '6000',
  });
});
afterAll(() => svc.stop());

describe("one request's results, across its statements", () => {
  test('POST /queries: past QUERY_MAX_REQUEST_RESULT_BYTES the statement that passes it is refused, each alone within QUERY_MAX_RESULT_BYTES', async () => {
    const two = await queries([resultOf(30), resultOf(30)]);
    expect(two.status).toBe(200);
    expect(two.body.results.map((r: { results: unknown[] }) => r.results.length)).toEqual([30_000, 30_000]);
    const { status, body } = await queries([resultOf(30), resultOf(30), resultOf(30)]);
    expect(status).toBe(400);
    expect(body.detail).toStartWith(`statement 2 failed: the results of this request pass ${64 * MiB} bytes (QUERY_MAX_REQUEST_RESULT_BYTES)`);
    expect(body.errors).toEqual([{ pointer: '/queries/2', detail: expect.stringContaining('QUERY_MAX_REQUEST_RESULT_BYTES') }]);
  });
});

describe('every request’s results together: answers a client does not read', () => {
  test('stay charged while unread: other requests get 503 until the idle timeout cuts the client, then are answered', async () => {
    // An answer of 60 MB read by nobody: the sockets on the way take some MB of it, the rest stays charged.
    const stalled = await unreadAnswer();
    expect(await stalled.status).toBe(200);

    const refused = await queries([resultOf(60)]);
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toContain('QUERY_RESULT_BYTES_IN_FLIGHT');
    const ch = await clickhouse(resultOf(60));
    expect({ status: ch.status, code: ch.headers.get('x-clickhouse-exception-code'), retry: ch.headers.get('retry-after') }).toEqual({ status: 503, code: '202', retry: expect.any(String) });
    // Small answers fit beside them.
    expect((await queries(['SELECT 1 AS one'])).body.results).toEqual([{ results: [{ one: 1 }] }]);

    // The service cuts off a client that takes nothing for HTTP_IDLE_TIMEOUT_MS, and gives back what it held.
    await eventually('the unread answer cut off', async () => (await queries([resultOf(60)])).status === 200, 30_000);
    expect((await clickhouse(resultOf(60))).status).toBe(200);
    stalled.close();
  });
});

/**
 * Each request on a connection of its own: the short idle timeout closes pooled connections
 * between requests, which a reused one would meet as a reset.
 */
const apart = { keepalive: false } as const;

async function queries(statements: string[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/queries`, { ...apart, method: 'POST', headers: { authorization: `Bearer ${svc.privateKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ queries: statements }) });
  return { status: res.status, body: await res.json() };
}

function clickhouse(sql: string): Promise<Response> {
  return fetch(`${svc.url}/clickhouse?default_format=JSONEachRow`, { ...apart, method: 'POST', headers: { authorization: `Basic ${btoa(`default:${svc.privateKey}`)}` }, body: sql });
}

/** POST /queries of a 60 MB result on a connection that reads the status line and nothing more. */
async function unreadAnswer(): Promise<{ status: Promise<number>; close(): void }> {
  let answered!: (status: number) => void;
  const status = new Promise<number>((resolve) => (answered = resolve));
  const socket: Socket<undefined> = await Bun.connect({
    hostname: '127.0.0.1',
    port: Number(new URL(svc.url).port),
    socket: {
      data(s, data) {
        answered(Number(/^HTTP\/1\.1 (\d{3})/.exec(new TextDecoder().decode(data.subarray(0, 16)))?.[1]));
        s.pause();
      },
    },
  });
  const body = JSON.stringify({ queries: [resultOf(60)] });
  socket.write(
    `POST /queries HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.privateKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  return { status, close: () => socket.end() };
}
