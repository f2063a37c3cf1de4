import { afterAll, beforeAll, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { SERVED_BY_DENO } from '../helpers/deno-service';
import { startTestService, type TestService } from '../helpers/test-service';

// The connection gate answers the collection routes' small POSTs in the service's own process
// (src/http/gate-in-process.ts); the server that times connections out never sees them.
let svc: TestService;
let limited: TestService;
beforeAll(async () => {
  svc = await startTestService({ HTTP_IDLE_TIMEOUT_MS: '1000' });
  limited = await startTestService({ RATE_LIMIT_COLLECT_PER_ADDRESS: '3/m' });
});
afterAll(() => Promise.all([svc.stop(), limited.stop()]));

const track = (id: string, to = svc, host = 'localhost') => {
  const body = JSON.stringify({ events: [{ type: 'track', event: 'in-process', anonymousId: id }] });
  return `POST /events HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${to.publicKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** A keep-alive connection from `localAddress`: each request's status, and whether the server closed it. */
function connection(localAddress = '127.0.0.1', to = svc) {
  const socket: Socket = connect({ port: to.port, host: '127.0.0.1', localAddress });
  let text = '';
  let closed = false;
  const waiting: Array<() => void> = [];
  socket.on('data', (chunk) => {
    text += chunk;
    waiting.splice(0).forEach((wake) => wake());
  });
  socket.on('close', () => {
    closed = true;
    waiting.splice(0).forEach((wake) => wake());
  });
  socket.on('error', () => {});
  const statuses = () => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  return {
    get closed() {
      return closed;
    },
    statuses,
    /** Sends `raw` and waits for the `n`th answer of the connection (or its end). */
    async send(raw: string, n: number): Promise<void> {
      socket.write(raw);
      while (statuses().length < n && !closed) await new Promise<void>((wake) => waiting.push(wake));
    },
    /** Waits for the server to close the connection. */
    async untilClosed(): Promise<void> {
      while (!closed) await new Promise<void>((wake) => waiting.push(wake));
    },
    end: () => socket.destroy(),
  };
}

test.skipIf(SERVED_BY_DENO)('a connection busy with collection requests for longer than HTTP_IDLE_TIMEOUT_MS stays open; once idle, it is closed', async () => {
  const conn = connection();
  try {
    // A request the server answers (after its first request, the server times its connection
    // out after 1 s, counted in its timer's ticks of 4 s), then collection requests 400 ms apart
    // for 6 s: the connection is never idle for 1 s, though the server sees nothing on its
    // connection all that time.
    await conn.send('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', 1);
    for (let i = 2; i <= 16; i++) {
      await conn.send(track(`busy-${i}`), i);
      expect(conn.closed).toBe(false);
      await Bun.sleep(400);
    }
    expect(conn.statuses()).toEqual([200, ...Array<number>(15).fill(201)]);
    expect(conn.closed).toBe(false);
    await conn.untilClosed();
    expect(conn.statuses()).toHaveLength(16);
  } finally {
    conn.end();
  }
}, 30_000);

test.skipIf(SERVED_BY_DENO)('collection answered in the process counts each client by its own address (here 127.0.0.3 and 127.0.0.4)', async () => {
  const first = connection('127.0.0.3', limited);
  const second = connection('127.0.0.4', limited);
  try {
    const a = track('a', limited);
    await first.send(a + a + a + a, 4);
    expect(first.statuses()).toEqual([201, 201, 201, 429]);
    await second.send(track('b', limited), 1);
    expect(second.statuses()).toEqual([201]);
  } finally {
    first.end();
    second.end();
  }
});

test.skipIf(SERVED_BY_DENO)('collection with a Host that makes no URL (a port over 65535, an address out of range) is answered as the server answers it, and the connection goes on', async () => {
  const conn = connection();
  try {
    await conn.send(track('host-1', svc, 'a:99999') + track('host-2', svc, '999.999.999.999') + track('host-3', svc, '[::::]') + track('host-4'), 4);
    expect(conn.statuses()).toEqual([201, 201, 201, 201]);
  } finally {
    conn.end();
  }
});

test.skipIf(SERVED_BY_DENO)("collection with headers over the server's limit gets the server's 431, as any request does", async () => {
  const conn = connection();
  try {
    await conn.send(track('long-head').replace('Host: localhost\r\n', `Host: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n`), 1);
    expect(conn.statuses()).toEqual([431]);
  } finally {
    conn.end();
  }
});
