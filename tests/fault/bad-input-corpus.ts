/**
 * A generated corpus of hostile requests against every route: bodies with each field replaced by
 * each bad value, malformed JSON, invalid UTF-8, wrong content types and keys, bad query strings
 * and path parameters, oversized URLs and headers, and raw HTTP framing errors.
 *
 * Event bodies carry a tag in four fields (`userId`, `anonymousId`, `properties.r`, `context.r`),
 * so that whatever one mutation destroys, what was stored of a request can still be found.
 */
import { KEYS } from './harness';

export interface BadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** The tag its events carry, when it sends events. */
  tag?: string;
  /** The service may close the connection instead of answering (oversized request line or headers). */
  mayClose?: boolean;
}

/** A request written byte for byte on a socket of its own. */
export interface RawRequest {
  name: string;
  bytes: string | Uint8Array;
}

/** A JSON text, or a value to serialize. Raw texts express what JSON.stringify cannot (1e309, `__proto__` keys, duplicates). */
type Value = { raw: string } | unknown;
const raw = (text: string) => ({ raw: text });
const REMOVE = Symbol('remove');

const MB = 1_000_000;

/** What each field is replaced with. */
const BAD_VALUES: Array<[string, Value | typeof REMOVE]> = [
  ['removed', REMOVE],
  ['null', null],
  ['true', true],
  ['zero', 0],
  ['minus zero', raw('-0')],
  ['1e309', raw('1e309')],
  ['-1e309', raw('-1e309')],
  ['1e-400', raw('1e-400')],
  ['30 digits', raw('123456789012345678901234567890')],
  ['fraction', 1.5],
  ['negative', -1],
  ['empty string', ''],
  ['1 MB string', 'x'.repeat(MB)],
  ['NUL', '\u0000'],
  ['lone surrogate', raw('"\\ud800"')],
  ['control characters', '\u0001\u001f\u007f'],
  ['empty array', []],
  ['array', [1, 'two', null]],
  ['empty object', {}],
  ['__proto__ key', raw('{"__proto__":{"polluted":"yes"},"type":"track"}')],
  ['constructor key', raw('{"constructor":{"prototype":{"polluted":"yes"}}}')],
  ['duplicate keys', raw('{"a":1,"a":2,"type":"track","type":"page"}')],
  ['nested 65 deep', raw('['.repeat(65) + ']'.repeat(65))],
  ['nested 100,000 deep', raw('['.repeat(100_000) + ']'.repeat(100_000))],
  ['100,000 numbers', raw(`[${new Array(100_000).fill(0).join(',')}]`)],
  ['bad date', '2024-13-45T99:99:99Z'],
  ['SQL', "'; DROP TABLE events; --"],
];

/** JSON text of `value`, where `{ raw }` parts are written as they are. */
function serialize(value: Value): string {
  if (value && typeof value === 'object' && 'raw' in value && Object.keys(value).length === 1) return (value as { raw: string }).raw;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
  return JSON.stringify(value);
}

/** `template` with the value at `path` replaced, added or removed. */
function mutate(template: unknown, path: Array<string | number>, value: Value | typeof REMOVE): Value {
  if (path.length === 0) return value === REMOVE ? {} : value;
  const [head, ...rest] = path;
  const removing = rest.length === 0 && value === REMOVE;
  if (Array.isArray(template)) return template.flatMap((item, i) => (i !== head ? [item] : removing ? [] : [mutate(item, rest, value)]));
  const out: Record<string, unknown> = { ...(template as Record<string, unknown>) };
  if (removing) delete out[head!];
  else out[head!] = mutate(out[head!] ?? {}, rest, value);
  return out;
}

function eventsBody(tag: string): unknown {
  const event = (type: string, i: number) => ({ type, event: 'fault', userId: tag, anonymousId: tag, properties: { r: tag, i }, context: { r: tag } });
  return { events: [event('track', 0), event('identify', 1)] };
}

interface BodyRoute {
  method: string;
  path: string;
  key: string;
  template: (tag: string) => unknown;
  /** Where mutations go. */
  paths: Array<Array<string | number>>;
  sendsEvents?: boolean;
}

function bodyRoutes(workspaceId: string): BodyRoute[] {
  return [
    {
      method: 'POST',
      path: '/events',
      key: KEYS.public,
      template: eventsBody,
      sendsEvents: true,
      paths: [[], ['events'], ['events', 0], ['events', 0, 'type'], ['events', 0, 'event'], ['events', 0, 'userId'], ['events', 0, 'timestamp'], ['events', 0, 'properties'], ['events', 0, 'properties', 'r'], ['events', 0, 'traits'], ['events', 0, 'context'], ['events', 1, 'groupId'], ['extra']],
    },
    { method: 'POST', path: '/queries', key: KEYS.private, template: () => ({ queries: ['SELECT count() FROM events'] }), paths: [[], ['queries'], ['queries', 0], ['extra']] },
    {
      method: 'POST',
      path: '/workspaces',
      key: KEYS.private,
      template: (tag) => ({ name: `bad ${tag}`, properties: { r: tag } }),
      paths: [[], ['name'], ['databaseName'], ['properties'], ['extra']],
    },
    { method: 'PUT', path: `/workspaces/${workspaceId}`, key: KEYS.private, template: () => ({ properties: { plan: 'x' } }), paths: [[], ['name'], ['properties'], ['extra']] },
    {
      method: 'POST',
      path: '/webhooks',
      key: KEYS.private,
      template: () => ({ url: 'http://127.0.0.1:9/hook', enableBatching: true, eventTypes: ['track'], eventNames: ['never-sent'], flatten: false }),
      paths: [[], ['url'], ['enableBatching'], ['eventTypes'], ['eventTypes', 0], ['eventNames'], ['eventNames', 0], ['flatten'], ['extra']],
    },
  ];
}

const MALFORMED_JSON = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"events":',
  '{"events":[',
  '{"events":[{"type":"track"}',
  '{"events":[{"type":"track"}]}}',
  '{"events":[{"type":"track",}]}',
  '{"events":[{"type":"track"}],}',
  "{'events':[]}",
  '{events:[]}',
  '{"events":[{"type":"track"}]} trailing',
  '{"events":[{"type":"track"}]}\u0000',
  '\u0000{"events":[]}',
  '\ufeff{"events":[{"type":"track"}]}',
  '{"events":[{"type":"tr\u0000ack"}]}',
  '{"events":[{"type":"track","event":"a\nb"}]}',
  '{"events":[{"type":"track","event":"\\x41"}]}',
  '{"events":[{"type":"track","event":"\\u12"}]}',
  '{"events":[{"type":"track","event":"unterminated}]}',
  '{"events":[NaN]}',
  '{"events":[Infinity]}',
  '{"events":[01]}',
  '{"events":[.5]}',
  '{"events":[1.]}',
  '{"events":[+1]}',
  '{"events":[0x10]}',
  '/* comment */ {"events":[]}',
  '{"events":[]} // comment',
  'null',
  'true',
  '0',
  '"events"',
  '[]',
  '[{"type":"track"}]',
  '{"events":{"0":{"type":"track"}}}',
  '{"events":"[{\\"type\\":\\"track\\"}]"}',
  '{"__proto__":{"events":[{"type":"track"}]}}',
  '{"constructor":{"prototype":{"events":[]}}}',
  '{"events":[{"__proto__":{"type":"track","userId":"proto"}}]}',
  '{"events":[{"type":"track","__proto__":{"userId":"proto"}}]}',
  '{"events":[],"events":[{"type":"track"}]}',
];

const INVALID_UTF8: Uint8Array[] = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xa0, 0xa1],
  [0xe2, 0x28, 0xa1],
  [0xf0, 0x28, 0x8c, 0xbc],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
].map((bytes) => {
  const head = new TextEncoder().encode('{"events":[{"type":"track","event":"');
  const tail = new TextEncoder().encode('"}]}');
  return new Uint8Array([...head, ...bytes, ...tail]);
});

const CONTENT_TYPES: Array<string | undefined> = ['application/json', undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/jsonx', 'application/problem+json'];

/** Query-string parameters of each listing, with the values they get. */
const LISTINGS: Array<{ path: string; key: string; params: string[] }> = [
  { path: '/events', key: KEYS.private, params: ['limit', 'offset', 'orderByField', 'orderByDirection', 'startDate', 'endDate', 'type', 'uuid', 'userId', 'event', 'properties.plan', 'traits.x', 'context.r', 'properties', 'nope'] },
  { path: '/workspaces', key: KEYS.private, params: ['limit', 'offset', 'nope'] },
  { path: '/webhooks', key: KEYS.private, params: ['limit', 'offset', 'nope'] },
];

const BAD_QUERY_VALUES = ['', '-1', '1e309', '1.5', 'NaN', '99999999999999999999999', '%00', '%ff%fe', '%', '%zz', "'; DROP TABLE events; --", 'x'.repeat(10_000), '[]', '{}', '__proto__', 'constructor', 'ASC%00', '2024-13-45', 'timestamp DESC', 'a&b=c'];

const BAD_IDS = ['x', '%00', '%ff', '..', '..%2f..%2fetc%2fpasswd', 'x'.repeat(5000), '__proto__', 'constructor', "'", '%27%3B', '00000000-0000-0000-0000-000000000000', ' ', '%20', 'ws_%E2%80%8B'];

/**
 * The whole corpus, generated as it is sent (it holds hundreds of megabytes of bodies in all);
 * `workspaceId` and `webhookId` exist in the service under test.
 */
export function* badRequestCorpus(workspaceId: string, webhookId: string, newTag: () => string): Generator<BadRequest> {
  const headersFor = (key: string | undefined, contentType: string | undefined): Record<string, string> => ({
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...(contentType ? { 'content-type': contentType } : {}),
  });

  // Every field of every body replaced by every bad value: under every content type with the
  // route's key, and as JSON with no key or a wrong one.
  const variants = [...CONTENT_TYPES.map((contentType) => ({ contentType, valid: true })), { contentType: 'application/json', valid: false }];
  for (const route of bodyRoutes(workspaceId)) {
    for (const path of route.paths) {
      for (const [, value] of BAD_VALUES) {
        for (const { contentType, valid } of variants) {
          for (const key of valid ? [route.key] : [undefined, 'wrong-key']) {
            const tag = route.sendsEvents ? newTag() : undefined;
            yield { method: route.method, path: route.path, headers: headersFor(key, contentType), body: serialize(mutate(route.template(tag ?? 'x'), path, value)), tag };
          }
        }
      }
    }
  }
  // Malformed JSON and invalid UTF-8 on every body route, under every content type.
  for (const route of bodyRoutes(workspaceId)) {
    for (const contentType of CONTENT_TYPES) {
      for (const text of MALFORMED_JSON) {
        const tag = route.sendsEvents ? newTag() : undefined;
        yield { method: route.method, path: route.path, headers: headersFor(route.key, contentType), body: tag ? text.replace('"track"', `"track","userId":"${tag}"`) : text, tag };
      }
      for (const bytes of INVALID_UTF8) yield { method: route.method, path: route.path, headers: headersFor(route.key, contentType), body: bytes };
    }
  }
  // Public keys where private ones are needed, and private keys on ingest.
  for (const route of bodyRoutes(workspaceId)) yield { method: route.method, path: route.path, headers: headersFor(KEYS.public, 'application/json'), body: serialize(route.template('x')) };
  // Every listing parameter with every bad value.
  for (const listing of LISTINGS) {
    for (const param of listing.params) {
      for (const value of BAD_QUERY_VALUES) {
        for (const key of [listing.key, undefined]) yield { method: 'GET', path: `${listing.path}?${param}=${value}`, headers: headersFor(key, undefined) };
      }
    }
  }
  for (const value of BAD_QUERY_VALUES) yield { method: 'GET', path: `/webhooks/${webhookId}/deliveries?status=${value}&limit=${value}`, headers: headersFor(KEYS.private, undefined) };
  // Path parameters.
  for (const id of BAD_IDS) {
    for (const [method, path] of [
      ['GET', `/workspaces/${id}`],
      ['PUT', `/workspaces/${id}`],
      ['DELETE', `/workspaces/${id}`],
      ['DELETE', `/webhooks/${id}`],
      ['GET', `/webhooks/${id}/deliveries`],
    ] as const) {
      yield { method, path, headers: headersFor(KEYS.private, 'application/json'), body: method === 'PUT' ? '{"properties":{}}' : undefined };
    }
  }
  // Methods no route has.
  for (const path of ['/', '/events', '/queries', '/workspaces', '/webhooks', `/workspaces/${workspaceId}`]) {
    for (const method of ['PATCH', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'POST', 'GET']) yield { method, path, headers: headersFor(KEYS.private, 'application/json'), body: method === 'GET' || method === 'OPTIONS' || method === 'TRACE' ? undefined : '{}' };
  }
  // Thousands of parameters, very long URLs and headers.
  for (const n of [100, 1000, 5000]) {
    yield { method: 'GET', path: `/events?${Array.from({ length: n }, (_, i) => `p${i}=${i}`).join('&')}`, headers: headersFor(KEYS.private, undefined), mayClose: true };
    yield { method: 'GET', path: `/events?${Array.from({ length: n }, (_, i) => `properties.k${i}=${i}`).join('&')}`, headers: headersFor(KEYS.private, undefined), mayClose: true };
    yield { method: 'GET', path: `/events?${Array.from({ length: n }, () => 'userId=a').join('&')}`, headers: headersFor(KEYS.private, undefined), mayClose: true };
  }
  for (const length of [8_000, 64_000, 1_000_000]) {
    yield { method: 'GET', path: `/events?userId=${'u'.repeat(length)}`, headers: headersFor(KEYS.private, undefined), mayClose: true };
    yield { method: 'GET', path: `/${'p'.repeat(length)}`, headers: {}, mayClose: true };
    yield { method: 'GET', path: '/events', headers: { ...headersFor(KEYS.private, undefined), 'x-long': 'h'.repeat(length) }, mayClose: true };
    yield { method: 'GET', path: '/events', headers: { authorization: `Bearer ${'k'.repeat(length)}` }, mayClose: true };
  }
  yield { method: 'GET', path: '/events', headers: { ...headersFor(KEYS.private, undefined), ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`x-h${i}`, 'v'])) }, mayClose: true };
  for (const authorization of ['Bearer', 'Bearer ', 'Basic abc', `bearer ${KEYS.private}`, `Bearer ${KEYS.private} extra`, `Bearer\t${KEYS.private}`, 'Bearer \u00ff', `Bearer ${KEYS.private},${KEYS.private}`]) {
    yield { method: 'GET', path: '/events', headers: { authorization } };
  }
}

/** Framing errors only a raw socket can send. */
export function rawRequestCorpus(port: number): RawRequest[] {
  const host = `Host: 127.0.0.1:${port}\r\n`;
  const auth = `Authorization: Bearer ${KEYS.public}\r\n`;
  const body = '{"events":[{"type":"track","event":"raw"}]}';
  const post = (headers: string, payload: string) => `POST /events HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\n${headers}\r\n${payload}`;
  return [
    { name: 'truncated body, then close', bytes: post(`Content-Length: ${body.length + 50}\r\n`, body) },
    { name: 'negative Content-Length', bytes: post('Content-Length: -5\r\n', body) },
    { name: 'non-numeric Content-Length', bytes: post('Content-Length: abc\r\n', body) },
    { name: 'two different Content-Lengths', bytes: post(`Content-Length: ${body.length}\r\nContent-Length: 3\r\n`, body) },
    { name: 'Content-Length and chunked', bytes: post(`Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`, `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`) },
    { name: 'bad chunk size', bytes: post('Transfer-Encoding: chunked\r\n', `zz\r\n${body}\r\n0\r\n\r\n`) },
    { name: 'chunk longer than said', bytes: post('Transfer-Encoding: chunked\r\n', `2\r\n${body}\r\n0\r\n\r\n`) },
    { name: 'unknown transfer encoding', bytes: post('Transfer-Encoding: gzip\r\n', body) },
    { name: 'request line garbage', bytes: 'GARBAGE\r\n\r\n' },
    { name: 'HTTP/0.9 request', bytes: 'GET /\r\n' },
    { name: 'HTTP/2 preface on HTTP/1', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' },
    { name: 'header without a colon', bytes: `GET / HTTP/1.1\r\n${host}NoColonHere\r\n\r\n` },
    { name: 'header name with a space', bytes: `GET / HTTP/1.1\r\n${host}Bad Name: x\r\n\r\n` },
    { name: 'NUL in a header', bytes: `GET / HTTP/1.1\r\n${host}X-A: a\u0000b\r\n\r\n` },
    { name: 'bare LF line endings', bytes: `GET / HTTP/1.1\n${host.replace('\r\n', '\n')}\n` },
    { name: 'no Host header', bytes: 'GET / HTTP/1.1\r\n\r\n' },
    { name: 'absolute URI', bytes: `GET http://evil.example/ HTTP/1.1\r\n${host}\r\n` },
    { name: 'path without a slash', bytes: `GET events HTTP/1.1\r\n${host}\r\n` },
    { name: 'version 9.9', bytes: `GET / HTTP/9.9\r\n${host}\r\n` },
    { name: 'binary junk', bytes: new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)) },
    { name: 'headers never finished, then close', bytes: `GET / HTTP/1.1\r\n${host}X-A: ` },
    { name: 'obsolete line folding', bytes: `GET / HTTP/1.1\r\n${host}X-A: a\r\n  continued\r\n\r\n` },
    { name: 'pipelined good and bad', bytes: `GET / HTTP/1.1\r\n${host}\r\nGARBAGE\r\n\r\n` },
    { name: 'Expect: 100-continue, then no body', bytes: post(`Content-Length: ${body.length}\r\nExpect: 100-continue\r\n`, '') },
  ];
}
