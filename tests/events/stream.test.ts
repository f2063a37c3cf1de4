import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { testInProcess } from '../helpers/deno-service';
import { eventually } from '../helpers/eventually';
import { openStream, type OpenStream } from '../helpers/event-stream';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

const MAX_STREAMS = 2;
const BUFFER_BYTES = 128 * 1024;

describe('GET /events/stream', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ STREAM_MAX_CONNECTIONS_PER_KEY: String(MAX_STREAMS), STREAM_BUFFER_BYTES: String(BUFFER_BYTES) });
  });
  afterAll(() => svc.stop());

  describe('keys', () => {
    test('no key: 401 with WWW-Authenticate', async () => {
      const res = await svc.request('GET', '/events/stream');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    });

    test('an unknown key: 401', async () => {
      expect((await svc.request('GET', '/events/stream', { key: 'sk_not_a_key_at_all' })).status).toBe(401);
    });

    test('a public key: 403 naming the key it needs', async () => {
      const res = await svc.request('GET', '/events/stream', { key: svc.publicKey });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toContain('a private key');
    });
  });

  test('a misspelt filter or an unknown type: 400 naming the parameter', async () => {
    const unknown = await svc.request('GET', '/events/stream?user=u1', { key: svc.privateKey });
    expect(unknown.status).toBe(400);
    const badType = await svc.request('GET', '/events/stream?type=click', { key: svc.privateKey });
    expect(badType.status).toBe(400);
    expect(((await badType.json()) as { errors: unknown }).errors).toEqual([{ parameter: 'type', detail: 'must be one of page, track, identify, group, screen, alias' }]);
  });

  test('sends the events stored from then on, in order, as GET /events returns them', async () => {
    const stream = await openStream(svc);
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toStartWith('text/event-stream');
      expect(await stream.next()).toEqual({ event: 'ready', data: { filters: {} } });
      const sent = await sendEvents(svc, [
        { type: 'track', event: 'signup', userId: 'u1', properties: { plan: 'pro', n: 12345678901234567890 } },
        { type: 'identify', userId: 'u1', traits: { email: 'a@example.com' } },
      ]);
      expect(await stream.next()).toEqual({ event: 'message', data: sent.results[0] });
      expect(await stream.next()).toEqual({ event: 'message', data: sent.results[1] });
    } finally {
      await stream.close();
    }
  });

  test('filters by type, event and userId, combined with AND', async () => {
    const stream = await openStream(svc, 'type=track&event=signup&userId=u7');
    try {
      expect(await stream.next()).toEqual({ event: 'ready', data: { filters: { type: 'track', event: 'signup', userId: 'u7' } } });
      const sent = await sendEvents(svc, [
        { type: 'track', event: 'signup', userId: 'u8' },
        { type: 'page', event: 'signup', userId: 'u7' },
        { type: 'track', event: 'login', userId: 'u7' },
        { type: 'track', event: 'signup', userId: 'u7', properties: { first: true } },
      ]);
      await sendEvents(svc, [{ type: 'track', event: 'signup', userId: 'u7', properties: { second: true } }]);
      expect((await stream.next()).data).toEqual(sent.results[3]);
      expect((await stream.next()).data.properties).toEqual({ second: true });
    } finally {
      await stream.close();
    }
  });

  test("another workspace's events never reach the stream", async () => {
    const other = await createWorkspace(svc, { name: 'stream-other' });
    const stream = await openStream(svc);
    try {
      await stream.next();
      await sendEvents(svc, [{ type: 'track', event: 'theirs' }], other.publicApiKey);
      await sendEvents(svc, [{ type: 'track', event: 'ours' }]);
      expect((await stream.next()).data.event).toBe('ours');
    } finally {
      await stream.close();
    }
  });

  test('one stream more than STREAM_MAX_CONNECTIONS_PER_KEY: 429 with Retry-After; another key is counted apart', async () => {
    const other = await createWorkspace(svc, { name: 'stream-limit' });
    const open: OpenStream[] = [];
    try {
      for (let i = 0; i < MAX_STREAMS; i++) open.push(await openStream(svc));
      const refused = await svc.request('GET', '/events/stream', { key: svc.privateKey });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { detail: string }).detail).toContain(`holds ${MAX_STREAMS} open streams`);
      const theirs = await openStream(svc, '', other.privateApiKey);
      open.push(theirs);
      expect(theirs.response.status).toBe(200);
      // A closed stream frees its place.
      await open.shift()!.close();
      await eventually('a closed stream frees its place', async () => {
        const res = await svc.request('GET', '/events/stream', { key: svc.privateKey });
        if (res.status === 200) open.push(await wrap(res));
        else await res.body?.cancel();
        return res.status === 200;
      });
    } finally {
      await Promise.all(open.map((s) => s.close()));
    }
  });

  test("deleting the workspace ends its streams with an end message, and its key is refused after", async () => {
    const doomed = await createWorkspace(svc, { name: 'stream-doomed' });
    const stream = await openStream(svc, '', doomed.privateApiKey);
    await stream.next();
    expect((await svc.request('DELETE', `/workspaces/${doomed.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect(await stream.next()).toEqual({ event: 'end', data: { reason: 'workspace deleted' } });
    expect((await svc.request('GET', '/events/stream', { key: doomed.privateApiKey })).status).toBe(401);
  });

  testInProcess('a client that stops reading holds at most STREAM_BUFFER_BYTES; the rest is dropped and counted', async () => {
    // A raw connection that sends the request and then reads nothing: the kernel's buffers fill
    // (a few MB on loopback), then the service's queue for it, then events are dropped.
    const socket = connect(svc.port, '127.0.0.1');
    socket.pause();
    socket.write(`GET /events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${svc.privateKey}\r\n\r\n`);
    await eventually('the stream is open', async () => svc.streams.stats().streams === 1);
    const heapBefore = heapUsed();
    const padding = 'x'.repeat(1000);
    // Batches smaller than the bound, so that a reader keeping up would lose nothing.
    const batches = 80;
    const perBatch = 100;
    for (let i = 0; i < batches; i++) {
      await sendEvents(svc, Array.from({ length: perBatch }, (_, j) => ({ type: 'track', event: 'bulk', properties: { i, j, padding } })));
    }
    // Streams are offered events as they are loaded into the engine.
    await svc.buffer.loaded();
    const { bufferedBytes } = svc.streams.stats();
    const heapAfter = heapUsed();
    const sentMb = (batches * perBatch * 1.05) / 1024;
    console.log(
      `slow reader: about ${sentMb.toFixed(0)} MB of events offered; queued for it ${(bufferedBytes / 1024).toFixed(0)} KiB ` +
        `(bound ${BUFFER_BYTES / 1024} KiB); the service's JavaScript heap ${((heapAfter - heapBefore) / 1048576).toFixed(1)} MB apart before and after`,
    );
    expect(bufferedBytes).toBeLessThanOrEqual(BUFFER_BYTES);
    expect(bufferedBytes).toBeGreaterThan(BUFFER_BYTES / 2);

    // Reading again: the queue drains, and the next event comes after a notice of what was dropped.
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received = (received + chunk).slice(-4096);
    });
    socket.resume();
    await eventually('the queue drains', async () => svc.streams.stats().bufferedBytes === 0, 30_000);
    await sendEvents(svc, [{ type: 'track', event: 'after-the-gap' }]);
    await eventually('the notice and the next event arrive', async () => received.includes('after-the-gap'), 30_000);
    const dropped = Number(/event: dropped\ndata: \{"dropped":(\d+)\}/.exec(received)?.[1]);
    expect(dropped).toBeGreaterThan(0);
    console.log(`slow reader: ${dropped} events dropped and announced`);
    socket.destroy();
    await eventually('the stream is closed', async () => svc.streams.stats().streams === 0);
  });
});

test('a quiet stream outlives HTTP_IDLE_TIMEOUT_MS; stopping the service ends it with an end message', async () => {
  const svc = await startTestService({ HTTP_IDLE_TIMEOUT_MS: '1000' });
  const stream = await openStream(svc);
  await stream.next();
  // Quiet for more than twice the idle timeout (Bun checks it every few seconds).
  await Bun.sleep(5000);
  const sent = await sendEvents(svc, [{ type: 'track', event: 'after-a-quiet-spell' }]);
  expect((await stream.next()).data).toEqual(sent.results[0]);
  const stopped = svc.stop();
  expect(await stream.next()).toEqual({ event: 'end', data: { reason: 'shutdown' } });
  await stopped;
});

/** The service's JavaScript heap after a full collection: where a stream's queue would grow. */
function heapUsed(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
}

/** An open stream from a response already received. */
async function wrap(response: Response): Promise<OpenStream> {
  return { response, next: () => Promise.reject(new Error('not read')), close: () => response.body!.cancel() };
}
