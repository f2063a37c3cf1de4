import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { createWorkspace, startTestService, type TestService } from '../helpers/test-service';
import { SERVED_BY_DENO } from '../helpers/deno-service';

/** A connection that sent a request's head and trickles its body; `events` records when it was answered or closed. */
interface Trickler {
  socket: Socket;
  stop(): void;
}

/**
 * Opens a connection from `localAddress` (any 127.x address is this machine's), writes `head`,
 * then a byte of body every `gapMs` until the server answers or closes; pushes `label` to
 * `events` at the first of those.
 */
function trickle(url: string, localAddress: string, head: string, gapMs: number, events: string[], label: string): Trickler {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), localAddress }, () => socket.write(head));
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    events.push(label);
    clearInterval(timer);
  };
  const timer = setInterval(() => !done && socket.write('{'), gapMs);
  socket.on('data', end);
  socket.on('close', end);
  socket.on('error', () => {});
  return { socket, stop: () => (clearInterval(timer), socket.destroy()) };
}

/** The status of the answer to `head` sent alone (its body never sent), read off a connection of its own. */
function statusOfHeadAlone(url: string, head: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', () => {});
  });
}

const MAX_BODY_BYTES = 10 * 1024 * 1024;

for (const gate of ['true', 'false']) {
  describe(`request bodies held in memory (HTTP_CONNECTION_GATE=${gate})`, () => {
    let svc: TestService;
    beforeAll(async () => {
      // The body timeout far off, and a minimum rate of 5 bytes a second: the tricklers below send
      // 10 (they hold their bodies until stopped), the slow sender 2.
      svc = await startTestService({ HTTP_CONNECTION_GATE: gate, REQUEST_BODY_TIMEOUT_MS: '30000', REQUEST_BODY_MIN_BYTES_PER_SECOND: '5' });
    });
    afterAll(() => svc.stop());

    test("while four connections of one address trickle bodies to the keyless POST /api/event, another workspace's POST /events is answered first", async () => {
      const other = await createWorkspace(svc, { name: `Budget ${gate} ${Date.now()}` });
      const events: string[] = [];
      // Each announces the largest body (four of them more than MAX_BODY_BYTES_IN_FLIGHT, 32 MiB).
      const head = `POST /api/event HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n`;
      const tricklers = Array.from({ length: 4 }, (_, i) => trickle(svc.url, '127.0.0.2', head, 100, events, `trickler ${i}`));
      try {
        await new Promise((sent) => setTimeout(sent, 300));
        const res = await svc.request('POST', '/events', { key: other.publicApiKey, body: { events: [{ type: 'track', event: 'beside-tricklers', userId: 'u1' }] } });
        events.push(`events ${res.status}`);
        expect(events[0]).toBe('events 201');
      } finally {
        for (const t of tricklers) t.stop();
      }
    });

    // Bun only: under Deno (TEST_RUNTIME=deno) these two time out; the minimum rate and the unread
    // body are not in place there yet (docs/limits.md).
    test.skipIf(SERVED_BY_DENO)('a body slower than REQUEST_BODY_MIN_BYTES_PER_SECOND gets 408, well before REQUEST_BODY_TIMEOUT_MS', async () => {
      const events: string[] = [];
      let answer = '';
      const head = `POST /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${svc.publicKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
      const slow = trickle(svc.url, '127.0.0.3', head, 500, events, 'slow');
      slow.socket.on('data', (chunk) => void (answer += chunk.toString('latin1')));
      await new Promise<void>((closed) => slow.socket.on('close', () => closed()));
      slow.stop();
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).detail).toContain('bytes a second');
    });

    test.skipIf(SERVED_BY_DENO)('a request with a wrong key, or a public key on a private route, is answered without its body being read', async () => {
      const head = (path: string, key: string) =>
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n`;
      expect(await statusOfHeadAlone(svc.url, head('/queries', 'sk_not_a_key'))).toBe(401);
      expect(await statusOfHeadAlone(svc.url, head('/queries', svc.publicKey))).toBe(403);
      expect(await statusOfHeadAlone(svc.url, head('/events', 'pk_not_a_key'))).toBe(401);
      expect(await statusOfHeadAlone(svc.url, head('/workspaces', 'sk_not_a_key'))).toBe(401);
    });
  });
}
