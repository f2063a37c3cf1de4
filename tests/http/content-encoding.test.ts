import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { once } from 'node:events';
import { brotliCompressSync, constants, createBrotliCompress, deflateSync, gzipSync } from 'node:zlib';
import { SERVED_BY_DENO } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const ENCODERS: Record<string, (bytes: Uint8Array) => Uint8Array> = {
  gzip: (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  br: (b) => brotliCompressSync(b),
};

const basic = (key: string) => `Basic ${btoa(`${key}:`)}`;

/** POSTs `body` compressed with `encoding` (the bytes as given when they are bytes already). */
async function post(path: string, encoding: string, body: unknown, headers: Record<string, string> = {}) {
  const raw = body instanceof Uint8Array ? body : new TextEncoder().encode(JSON.stringify(body));
  const bytes = body instanceof Uint8Array || !ENCODERS[encoding] ? raw : ENCODERS[encoding](raw);
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding, authorization: `Bearer ${svc.publicKey}`, ...headers },
    body: bytes,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const storedFor = async (userId: string) => (await listEvents(svc, `userId=${userId}`)).body.total as number;

describe('compressed bodies', () => {
  for (const encoding of Object.keys(ENCODERS)) {
    test(`${encoding} on POST /events, /v1/batch and /v1/track is inflated and stored`, async () => {
      const userId = uniqueName('u');
      expect((await post('/events', encoding, { events: [{ type: 'track', event: 'zipped', userId }] })).status).toBe(201);
      expect((await post('/v1/batch', encoding, { batch: [{ type: 'track', event: 'zipped', userId }] }, { authorization: basic(svc.publicKey) })).status).toBe(200);
      expect((await post('/v1/track', encoding, { event: 'zipped', userId }, { authorization: basic(svc.publicKey) })).status).toBe(200);
      expect(await storedFor(userId)).toBe(3);
    });
  }

  test('the token is case-insensitive and may carry spaces; identity means none', async () => {
    const userId = uniqueName('u');
    expect((await post('/events', ' GZIP ', gzipSync(JSON.stringify({ events: [{ type: 'page', userId }] })))).status).toBe(201);
    expect((await post('/events', 'identity', new TextEncoder().encode(JSON.stringify({ events: [{ type: 'page', userId }] })))).status).toBe(201);
    expect(await storedFor(userId)).toBe(2);
  });

  /** A JSON event whose one string is `mib` MiB of "a": the text around it, and the repeated middle. */
  const bombParts = (userId: string) => [`{"events":[{"type":"track","userId":"${userId}","event":"bomb","properties":{"s":"`, '"}}]}'] as const;
  const mebibyte = new Uint8Array(1024 * 1024).fill(0x61);

  /** About 1 MB of valid gzip that inflates to 1 GiB: gzip members one after the other (RFC 1952), one 1 MiB member repeated. */
  function gzipBomb(userId: string): Uint8Array {
    const [head, tail] = bombParts(userId);
    const member = gzipSync(mebibyte, { level: 9 });
    return Buffer.concat([gzipSync(head), ...Array.from({ length: 1024 }, () => member), gzipSync(tail)]);
  }

  /** About 50 KB of brotli that inflates to 256 MiB, compressed as a stream so the test never holds it. */
  async function brotliBomb(userId: string): Promise<Uint8Array> {
    const [head, tail] = bombParts(userId);
    const z = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    const out: Uint8Array[] = [];
    z.on('data', (chunk: Uint8Array) => out.push(chunk));
    const ended = once(z, 'end');
    z.write(head);
    for (let i = 0; i < 256; i++) if (!z.write(mebibyte)) await once(z, 'drain');
    z.end(tail);
    await ended;
    return Buffer.concat(out);
  }

  for (const [encoding, inflated, make] of [
    ['gzip', '1 GiB', async (u: string) => gzipBomb(u)],
    ['br', '256 MiB', brotliBomb],
  ] as const) {
    test(`a ${encoding} bomb (${inflated} inflated) gets 413 without being inflated in memory; nothing stored`, async () => {
      const userId = uniqueName('u');
      const bomb = await make(userId);
      const rss = () => Math.round(process.memoryUsage().rss / 1024 / 1024);
      const before = rss();
      const res = await post('/events', encoding, bomb);
      const after = rss();
      const where = SERVED_BY_DENO ? 'the service runs in another process: not measured here' : `service (this process) RSS ${before} MiB before, ${after} MiB after`;
      console.log(`${encoding} bomb: ${bomb.byteLength} bytes sent, ${inflated} inflated; ${where}`);
      expect(res.status).toBe(413);
      expect(res.body.detail).toBe(`the body inflates (${encoding}) to more than the limit of ${svc.config.maxBodyBytes} bytes`);
      expect(await storedFor(userId)).toBe(0);
    });
  }

  test('an event over MAX_EVENT_BYTES in a small compressed body: 413 (the inflated size counts)', async () => {
    const userId = uniqueName('u');
    const res = await post('/events', 'gzip', { events: [{ type: 'track', userId, properties: { s: 'x'.repeat(svc.config.maxEventBytes) } }] });
    expect(res.status).toBe(413);
    expect(res.body.errors).toEqual([{ pointer: '/events/0', detail: expect.stringContaining(`the limit is ${svc.config.maxEventBytes}`) }]);
    const segment = await post('/v1/batch', 'br', { batch: [{ type: 'track', userId, event: 'big', properties: { s: 'y'.repeat(33 * 1024) } }] });
    expect(segment.status).toBe(400);
    expect(segment.body.errors).toEqual([{ pointer: '/batch/0', detail: expect.stringContaining('the limit is 32768 per call') }]);
    expect(await storedFor(userId)).toBe(0);
  });

  test('corrupt or truncated bytes: 400 saying the body is not valid in its encoding; nothing stored', async () => {
    const userId = uniqueName('u');
    const good = gzipSync(JSON.stringify({ events: [{ type: 'page', userId }] }));
    for (const [encoding, bytes] of [
      ['gzip', new TextEncoder().encode('{"events":[]} is not gzip')],
      ['gzip', good.subarray(0, good.byteLength - 8)],
      ['deflate', good],
      ['br', new Uint8Array([0xff, 0xff, 0xff, 0xff])],
    ] as const) {
      const res = await post('/events', encoding, bytes);
      expect(res.status).toBe(400);
      expect(res.body.detail).toStartWith(`the body is not valid ${encoding}: `);
    }
    expect(await storedFor(userId)).toBe(0);
  });

  test('an unknown encoding: 415 naming it; nothing stored', async () => {
    const userId = uniqueName('u');
    for (const encoding of ['zstd', 'gzip, br', 'compress']) {
      const res = await post('/v1/track', encoding, new TextEncoder().encode(JSON.stringify({ userId, event: 'x' })), { authorization: basic(svc.publicKey) });
      expect(res.status).toBe(415);
      expect(res.body.detail).toBe(`Content-Encoding ${JSON.stringify(encoding)} is not supported; send gzip, deflate, br or none`);
    }
    expect(await storedFor(userId)).toBe(0);
  });
});
