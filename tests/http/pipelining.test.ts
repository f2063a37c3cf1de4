import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { createLogger } from '../../src/log';
import { SERVED_BY_DENO } from '../helpers/deno-service';
import { openStream } from '../helpers/event-stream';
import { eventually } from '../helpers/eventually';
import { rawExchange, type RawResponse } from '../helpers/raw-http';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
const lines: string[] = [];
beforeAll(async () => {
  // LOG_LEVEL for a service in a process of its own (TEST_RUNTIME=deno), the logger for one in this
  // process; debug, where collection that succeeded is logged.
  svc = await startTestService({ LOG_LEVEL: 'debug' }, undefined, createLogger('debug', (l) => lines.push(l)));
});
afterAll(() => svc.stop());

/** Status of each request logged, by request id. */
function loggedStatuses(): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const line of lines) {
    const entry = JSON.parse(line);
    if (entry.msg === 'request') statuses.set(entry.requestId, entry.status);
  }
  return statuses;
}

const json = (body: string) => JSON.parse(body);

/** A kind of request: how it is written (its id in X-Request-Id), and what its answer must be. */
interface Kind {
  name: string;
  raw(id: string): string;
  head?: boolean;
  status: number;
  /** What else the answer must show to be this request's (not the one before or after it). */
  is(res: RawResponse): boolean;
}

function post(path: string, authorization: string, body: unknown, id: string): string {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

const get = (target: string, id: string, headers = '') => `GET ${target} HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\n${headers}\r\n`;

function kinds(): Kind[] {
  const pub = `Bearer ${svc.publicKey}`;
  const priv = `Bearer ${svc.privateKey}`;
  const basic = `Basic ${btoa(`${svc.publicKey}:`)}`;
  const track = { type: 'track', event: 'pipelined' };
  return [
    { name: 'GET /', raw: (id) => get('/', id), status: 200, is: (r) => json(r.body).service === 'event-analytics' },
    { name: 'GET /events', raw: (id) => get('/events?limit=1', id, `Authorization: ${priv}\r\n`), status: 200, is: (r) => Array.isArray(json(r.body).results) },
    { name: 'POST /events, one event', raw: (id) => post('/events', pub, { events: [track] }, id), status: 201, is: (r) => json(r.body).results.length === 1 },
    { name: 'POST /events, a batch', raw: (id) => post('/events', pub, { events: [track, track, track] }, id), status: 201, is: (r) => json(r.body).results.length === 3 },
    { name: 'POST /v1/track', raw: (id) => post('/v1/track', basic, { event: 'pipelined', anonymousId: 'a1' }, id), status: 200, is: (r) => json(r.body).success === true },
    { name: 'POST /v1/batch', raw: (id) => post('/v1/batch', basic, { batch: [{ type: 'track', event: 'pipelined', anonymousId: 'a1' }] }, id), status: 200, is: (r) => json(r.body).success === true },
    { name: 'POST /queries', raw: (id) => post('/queries', priv, { queries: ['SELECT 41 + 1 AS answer'] }, id), status: 200, is: (r) => json(r.body).results[0].results[0].answer === 42 },
    { name: 'GET /script.js', raw: (id) => get('/script.js', id), status: 200, is: (r) => r.headers['content-type']!.startsWith('text/javascript') },
    { name: 'a 404', raw: (id) => get('/nowhere', id), status: 404, is: (r) => json(r.body).detail === 'no route GET /nowhere' },
    {
      name: 'an OPTIONS preflight',
      raw: (id) => `OPTIONS /events HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\nOrigin: https://shop.example\r\nAccess-Control-Request-Method: POST\r\n\r\n`,
      status: 204,
      is: (r) => r.headers['access-control-allow-origin'] === 'https://shop.example',
    },
    { name: 'HEAD /', raw: (id) => `HEAD / HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\n\r\n`, head: true, status: 200, is: (r) => r.body === '' },
    { name: 'CONNECT', raw: (id) => `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: ${id}\r\n\r\n`, status: 501, is: (r) => json(r.body).detail.includes('CONNECT') },
    { name: 'TRACE', raw: (id) => `TRACE / HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\n\r\n`, status: 501, is: (r) => json(r.body).detail.includes('TRACE') },
    { name: 'an unknown method', raw: (id) => `FOO / HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\n\r\n`, status: 501, is: (r) => json(r.body).detail.includes('FOO') },
  ];
}

/** What is wrong with `res` as the answer to a request of `kind` sent with `id`; undefined when nothing is. */
function fault(kind: Kind, id: string, res: RawResponse | undefined): string | undefined {
  if (!res) return 'no answer';
  if (res.status !== kind.status) return `status ${res.status}`;
  if (res.headers['x-request-id'] !== id) return `answer of ${res.headers['x-request-id']}`;
  try {
    return kind.is(res) ? undefined : `wrong answer: ${res.body.slice(0, 80)}`;
  } catch (err) {
    return `wrong answer (${(err as Error).message}): ${res.body.slice(0, 80)}`;
  }
}

describe('pipelined requests (several written at once on one connection)', () => {
  test('every pair of request kinds, in either order: both answered, in order, and both logged', async () => {
    const all = kinds();
    const problems: string[] = [];
    const sent: Array<[string, Kind]> = [];
    let n = 0;
    for (const first of all) {
      for (const second of all) {
        const ids = [`pair-${++n}-a`, `pair-${n}-b`];
        const { responses } = await rawExchange(svc.url, first.raw(ids[0]!) + second.raw(ids[1]!), [!!first.head, !!second.head]);
        [first, second].forEach((kind, i) => {
          const wrong = fault(kind, ids[i]!, responses[i]);
          if (wrong) problems.push(`${first.name} + ${second.name}: ${i === 0 ? 'first' : 'second'}: ${wrong}`);
          sent.push([ids[i]!, kind]);
        });
      }
    }
    expect(problems).toEqual([]);
    // A line is written once its answer is out.
    await eventually('every request logged', async () => sent.every(([id]) => loggedStatuses().has(id)));
    const logged = loggedStatuses();
    expect(sent.filter(([id, kind]) => logged.get(id) !== kind.status).map(([id, kind]) => `${id} (${kind.name}): ${logged.get(id)}`)).toEqual([]);
  }, 120_000);

  test('five at once, the slowest first: answered in the order sent', async () => {
    const priv = `Bearer ${svc.privateKey}`;
    const slow = post('/queries', priv, { queries: ['SELECT sleep(0.3) AS slept'] }, 'five-1');
    const rest = [2, 3, 4, 5].map((i) => post('/events', `Bearer ${svc.publicKey}`, { events: [{ type: 'track', event: `five-${i}` }] }, `five-${i}`));
    const { responses } = await rawExchange(svc.url, slow + rest.join(''), 5);
    expect(responses.map((r) => [r.headers['x-request-id'], r.status])).toEqual([
      ['five-1', 200],
      ['five-2', 201],
      ['five-3', 201],
      ['five-4', 201],
      ['five-5', 201],
    ]);
  });

  test('pipelined behind a body sent in chunks, and behind one of 2 MB: answered', async () => {
    const body = JSON.stringify({ events: [{ type: 'track', event: 'chunked' }] });
    const chunked = `POST /events HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: chunked-1\r\nAuthorization: Bearer ${svc.publicKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)};ext=1\r\n${body.slice(10)}\r\n0\r\n\r\n`;
    const big = JSON.stringify({ events: Array.from({ length: 900 }, (_, i) => ({ type: 'track', event: 'big', properties: { i, pad: 'x'.repeat(2000) } })) });
    const large = `POST /events HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: large-1\r\nAuthorization: Bearer ${svc.publicKey}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`;
    const { responses } = await rawExchange(svc.url, chunked + get('/', 'after-chunked') + large + get('/', 'after-large'), 4, 30_000);
    expect(responses.map((r) => [r.headers['x-request-id'], r.status])).toEqual([
      ['chunked-1', 201],
      ['after-chunked', 200],
      ['large-1', 201],
      ['after-large', 200],
    ]);
    expect(json(responses[2]!.body).results).toHaveLength(900);
  }, 60_000);

  test('a request written a byte at a time, with one pipelined behind it, then the client\'s FIN: both answered, then the connection ends', async () => {
    const bytes = post('/events', `Bearer ${svc.publicKey}`, { events: [{ type: 'track', event: 'trickle' }] }, 'trickle-1') + get('/', 'trickle-2');
    const received = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(svc.port, '127.0.0.1', async () => {
        for (const byte of bytes) {
          socket.write(byte);
          await Bun.sleep(1);
        }
        socket.end();
      });
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
    });
    expect([...received.matchAll(/x-request-id: (\S+)/gi)].map((m) => m[1])).toEqual(['trickle-1', 'trickle-2']);
    expect([...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))).toEqual([201, 200]);
  }, 30_000);

  test('an export, streamed in chunks, with a request pipelined behind it: the whole export, then the answer', async () => {
    await sendEvents(svc, Array.from({ length: 2000 }, (_, i) => ({ type: 'track', event: 'exported', userId: 'exporter', properties: { i } })));
    const { responses } = await rawExchange(svc.url, get('/events/export?format=ndjson&userId=exporter', 'export-1', `Authorization: Bearer ${svc.privateKey}\r\n`) + get('/', 'export-2'), 2, 30_000);
    expect(responses.map((r) => [r.headers['x-request-id'], r.status])).toEqual([
      ['export-1', 200],
      ['export-2', 200],
    ]);
    expect(responses[0]!.headers['transfer-encoding']).toBe('chunked');
    expect(responses[0]!.body.trim().split('\n')).toHaveLength(2000);
  }, 30_000);

  test('a live stream (an answer that does not end) carries events as they are stored', async () => {
    const stream = await openStream(svc, 'userId=streamed');
    try {
      await sendEvents(svc, [{ type: 'track', event: 'live', userId: 'streamed' }]);
      let message = await stream.next();
      while (message.event !== 'message') message = await stream.next();
      expect(message.data).toMatchObject({ event: 'live', userId: 'streamed' });
    } finally {
      await stream.close();
    }
  });

  test('Expect: 100-continue, then the body, with a request pipelined behind: 100, then both answers', async () => {
    const body = JSON.stringify({ events: [{ type: 'track', event: 'continue' }] });
    const head = `POST /events HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: continue-1\r\nAuthorization: Bearer ${svc.publicKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`;
    const { responses } = await rawExchange(svc.url, head + body + get('/', 'continue-2'), 2);
    expect(responses.map((r) => [r.headers['x-request-id'], r.status])).toEqual([
      ['continue-1', 201],
      ['continue-2', 200],
    ]);
  });
});

describe.skipIf(SERVED_BY_DENO)('requests Bun\'s parser refuses', () => {
  // Bun answers them with a bare status line and closes the connection; Deno's server answers
  // such requests itself, in its own way (docs/development.md#deno).
  const cases: Array<[string, string, number, string]> = [
    ['no Host header', 'GET / HTTP/1.1\r\n\r\n', 400, 'an HTTP/1.1 request must have a Host header'],
    ['a Content-Length that is no number', 'POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n', 400, 'Content-Length must be one whole number of bytes'],
    ['Content-Length and chunked', 'POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'a request must not have both Content-Length and Transfer-Encoding'],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: localhost\r\nNoColonHere\r\n\r\n', 400, 'the header line "NoColonHere" is not NAME: VALUE'],
    ['a request line of one word', 'GARBAGE\r\n\r\n', 400, 'the request line is not METHOD TARGET HTTP/1.1'],
    [
      'a chunked body with trailer fields',
      // With a key: the app reads the body (without one it answers 401 first).
      'POST /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer PUBLIC_KEY\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1c\r\n{"events":[{"type":"page"}]}\r\n0\r\nX-Trailer: t\r\n\r\n',
      400,
      'the chunked body ends with trailer fields, which the service does not take',
    ],
    ['a control character in a header', 'GET / HTTP/1.1\r\nHost: localhost\r\nX-A: a\u0000b\r\n\r\n', 400, 'the header X-A holds a control character'],
    ['binary junk', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)).toString('latin1'), 400, 'the request is not well-formed HTTP/1.1'],
    ['HTTP/2.0', 'GET / HTTP/2.0\r\nHost: localhost\r\n\r\n', 505, 'the service speaks HTTP/1.1 and HTTP/1.0, not HTTP/2.0'],
    ['bare LF line endings', 'GET / HTTP/1.1\nHost: localhost\n\n', 505, 'the request line is not METHOD TARGET HTTP/1.1, with lines ending in CRLF'],
    ['headers over the limit', `GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: ${'h'.repeat(17_000)}\r\n\r\n`, 431, 'the request line and headers are over the limit of 16384 bytes'],
    ['a body over every route\'s limit', 'POST /events/import HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999\r\n\r\n', 413, 'the request body is 99999999999 bytes; the limit of every route is'],
  ];
  for (const [name, raw, status, detail] of cases) {
    test(`${name}: ${status} problem+json saying so, logged, and the connection closed`, async () => {
      const before = lines.length;
      const { responses, closed } = await rawExchange(svc.url, Buffer.from(raw.replace('PUBLIC_KEY', svc.publicKey), 'latin1'), 1);
      expect(responses).toHaveLength(1);
      const res = responses[0]!;
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(json(res.body).detail).toStartWith(detail);
      expect(closed).toBe(true);
      await eventually('logged', async () => lines.slice(before).some((l) => JSON.parse(l).status === status));
    });
  }

  test('a connection that ends in the middle of a request\'s headers: 400 problem+json saying so', async () => {
    const received = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(svc.port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\nHost: localhost\r\nX-A: '));
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
    });
    expect(received).toStartWith('HTTP/1.1 400 Bad Request\r\n');
    expect(received).toContain('"detail":"the connection ended before the request headers did"');
  });

  test('a request pipelined behind a refused one is not read (the connection closes after the refusal)', async () => {
    const { responses, closed } = await rawExchange(svc.url, `GET / HTTP/1.1\r\n\r\n${get('/', 'behind-refused')}`, 2, 3000);
    expect(responses.map((r) => r.status)).toEqual([400]);
    expect(closed).toBe(true);
  });
});

test('the service tells clients apart by their own address (here 127.0.0.2 and 127.0.0.1), also through the connection gate', async () => {
  const limited = await startTestService({ RATE_LIMIT_READ_PER_ADDRESS: '2/m' });
  try {
    const from = (localAddress: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = connect({ port: limited.port, host: '127.0.0.1', localAddress }, () => socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(Number(text.split(' ')[1])));
        socket.on('error', reject);
      });
    expect([await from('127.0.0.2'), await from('127.0.0.2'), await from('127.0.0.2')]).toEqual([200, 200, 429]);
    expect(await from('127.0.0.1')).toBe(200);
  } finally {
    await limited.stop();
  }
});

test.skipIf(SERVED_BY_DENO)("HTTP_CONNECTION_GATE=false: clients talk to Bun's server directly, which drops a method it does not know without a word", async () => {
  const direct = await startTestService({ HTTP_CONNECTION_GATE: 'false' });
  try {
    expect((await direct.request('GET', '/')).status).toBe(200);
    const { responses, closed } = await rawExchange(direct.url, 'FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n', 1, 3000);
    expect(responses).toEqual([]);
    expect(closed).toBe(true);
  } finally {
    await direct.stop();
  }
});
