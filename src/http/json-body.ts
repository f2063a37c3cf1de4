import { Elysia } from 'elysia';
import { parseJsonLossless, scanJson } from '../lossless-json';
import { inflateBody, isEncoded } from './content-encoding';
import { HttpProblem, invalidInput, payloadTooLarge } from './problem';
import { pathOf } from './url-path';

/** A request body read but not yet decoded: decoding waits until the caller is authenticated. */
export class RawBody {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

export interface BodyLimits {
  maxBytes: number;
  /** Routes that read their body as a stream under limits of their own (an import): neither read nor limited here. */
  streamedPaths?: ReadonlySet<string>;
  /** How fast the body must come, or the request gets 408 and its connection closes. */
  pace: BodyPace;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const TEXT_PLAIN = /^text\/plain\s*(?:;|$)/i;

/**
 * Which `Content-Type`s a route reads as JSON: `json` only JSON types; `json-or-text` also
 * text/plain (what `navigator.sendBeacon` and a preflight-free `fetch` send); `any` whatever the
 * header says, none included, as Segment's and RudderStack's gateways do.
 */
export type JsonTypes = 'json' | 'json-or-text' | 'any';

const READS: Record<JsonTypes, (contentType: string) => boolean> = {
  json: (type) => JSON_TYPE.test(type),
  'json-or-text': (type) => JSON_TYPE.test(type) || TEXT_PLAIN.test(type),
  any: () => true,
};

const decodedSizes = new WeakMap<Request, number>();

/**
 * The size of a request's body as read, after any Content-Encoding was undone; Infinity before
 * it was read. Not the Content-Length header, which counts compressed bytes.
 */
export function bodyBytes(request: Request): number {
  return decodedSizes.get(request) ?? Infinity;
}

/**
 * The deepest nesting of objects and arrays a body may have. Deeper JSON parses, but then
 * cannot be serialized again (JavaScript's stack) or inserted (the engine's own limit), and an
 * event that fails an insert would fail the events of the other requests sharing it.
 */
const MAX_JSON_DEPTH = 64;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A `\u` escape of a UTF-16 surrogate. Valid UTF-8 cannot carry a lone surrogate, but such an
 * escape can, and the engine refuses it (failing every event inserted with it).
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** Most places listed in one 400 about text that is not Unicode. */
const MAX_ILL_FORMED = 20;

/** JSON Pointers to the strings and keys in `value` that hold a lone surrogate. */
function illFormedText(value: unknown, pointer = '', out: string[] = []): string[] {
  if (out.length >= MAX_ILL_FORMED) return out;
  if (typeof value === 'string') {
    if (!value.isWellFormed()) out.push(pointer);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => illFormedText(item, `${pointer}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const escaped = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!key.isWellFormed()) out.push(escaped);
      illFormedText(item, escaped, out);
    }
  }
  return out;
}

/** Bodies read before the app saw the request (the collection fast path), by request. */
const readElsewhere = new WeakMap<Request, Uint8Array>();

/** Hands the app a body already read off `request`, which it then reads instead of the spent stream. */
export function handOnBody(request: Request, bytes: Uint8Array): void {
  readElsewhere.set(request, bytes);
}

/** Whether `request`'s body was read before the app saw it (and is held under that reader's reservation). */
export const bodyHandedOn = (request: Request): boolean => readElsewhere.has(request);

/** The body of a request whose body is left unread (its route refuses it whatever it holds): empty. */
export function unreadBody(request: Request, contentType: string): RawBody {
  decodedSizes.set(request, 0);
  return new RawBody(contentType, '');
}

/** A body's bytes as the JSON routes read them (`decodeBody` then decodes them); throws on invalid UTF-8. */
export function rawBody(bytes: Uint8Array, contentType: string): RawBody {
  return new RawBody(contentType, strictUtf8.decode(bytes));
}

/** How fast a body must come: whole within `timeoutMs`, and at `minBytesPerSecond` on average once RATE_GRACE_MS passed (0: no minimum). */
export interface BodyPace {
  timeoutMs: number;
  minBytesPerSecond: number;
}

/**
 * Bodies up to this size (by Content-Length) are read whole by the runtime: far cheaper per request
 * than a stream reader (single-event requests spent a sixth of their time in one). Larger ones are
 * read as a stream, so that their rate can be watched as they come.
 */
const WHOLE_READ_BYTES = 64 * 1024;
/** The first second of a body is not held to the minimum rate: a connection's first round trips. */
const RATE_GRACE_MS = 1000;

/** A body being read: when it began, what came so far, and how it is refused if it is too slow. */
interface BodyWatch {
  started: number;
  /** When the body must be whole, and why, if it is not by then. */
  deadline: number;
  deadlineDetail: string;
  /** Bytes come so far; Infinity for a body read whole (its rate is in its deadline). */
  received: number;
  minBytesPerSecond: number;
  expire(detail: string): void;
}

/**
 * The body's bytes, but no more than `limit`: a body sent without Content-Length (chunked) is not
 * held in memory past it. The transport admits larger bodies for the streamed routes.
 */
async function readAtMost(request: Request, limit: number, watch: BodyWatch, cut: () => boolean): Promise<Uint8Array> {
  const handedOn = readElsewhere.get(request);
  if (handedOn) return handedOn;
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) < limit && Number(declared) <= WHOLE_READ_BYTES) return new Uint8Array(await request.arrayBuffer());
  watch.received = 0;
  const chunks: Uint8Array[] = [];
  for await (const chunk of request.body ?? []) {
    // Refused meanwhile (too slow): what comes next is not kept.
    if (cut()) break;
    chunks.push(chunk);
    watch.received += chunk.byteLength;
    if (watch.received >= limit) break;
  }
  return Buffer.concat(chunks);
}

/**
 * Bodies being read, checked by one timer: a timer and a race per request were a measurable
 * share of a single-event request's time. A 408 comes at most SWEEP_MS after it is due.
 */
const watches = new Set<BodyWatch>();
const SWEEP_MS = 50;
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = performance.now();
  for (const watch of watches) {
    const elapsed = now - watch.started;
    let detail: string;
    if (watch.deadline <= now) detail = watch.deadlineDetail;
    else if (elapsed > RATE_GRACE_MS && watch.received < (watch.minBytesPerSecond * elapsed) / 1000) detail = tooSlow(watch.minBytesPerSecond);
    else continue;
    watches.delete(watch);
    watch.expire(detail);
  }
  if (watches.size > 0) return;
  clearInterval(sweeper);
  sweeper = undefined;
}

const tooSlow = (minBytesPerSecond: number) => `the body came at fewer than ${minBytesPerSecond} bytes a second (REQUEST_BODY_MIN_BYTES_PER_SECOND)`;

/**
 * The body's bytes within `pace`: a body that trickles in (a slow client) gets 408, once below the
 * minimum rate or past the timeout, whichever comes first. A body read whole is due when it would
 * be at the minimum rate (its Content-Length's worth).
 */
export function readWithin(request: Request, pace: BodyPace, maxBytes: number): Promise<Uint8Array> {
  const started = performance.now();
  let deadline = started + pace.timeoutMs;
  let deadlineDetail = `the body did not arrive within ${pace.timeoutMs} ms`;
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (pace.minBytesPerSecond > 0 && declared >= 0) {
    const due = started + RATE_GRACE_MS + (declared / pace.minBytesPerSecond) * 1000;
    if (due < deadline) {
      deadline = due;
      deadlineDetail = tooSlow(pace.minBytesPerSecond);
    }
  }
  let cut = false;
  return new Promise((resolve, reject) => {
    const watch: BodyWatch = {
      started,
      deadline,
      deadlineDetail,
      received: Number.POSITIVE_INFINITY,
      minBytesPerSecond: pace.minBytesPerSecond,
      expire: (detail) => {
        cut = true;
        reject(new HttpProblem(408, 'Request Timeout', detail, { headers: { connection: 'close' } }));
      },
    };
    watches.add(watch);
    sweeper ??= setInterval(sweep, SWEEP_MS);
    // A client that goes away after the deadline rejects a promise already settled: nothing to hear.
    readAtMost(request, maxBytes + 1, watch, () => cut).then(
      (bytes) => {
        watches.delete(watch);
        resolve(bytes);
      },
      (err: unknown) => {
        watches.delete(watch);
        reject(err);
      },
    );
  });
}

/**
 * Reads request bodies as text within the limits (413 beyond the size, 408 beyond the time),
 * inflating a compressed one (the size limit then applies to the inflated body), and leaves the
 * decoding to `decodeBody`, which the auth macro (or a collection route's key reading) calls once
 * a key in a header has been checked.
 */
export function jsonBody(limits: BodyLimits) {
  return new Elysia({ name: 'json-body' })
    .onRequest(({ request }) => {
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > limits.maxBytes && !limits.streamedPaths?.has(pathOf(request.url))) throw payloadTooLarge(`the request body is ${length} bytes; the limit is ${limits.maxBytes}`);
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const bytes = await readWithin(request, limits.pace, limits.maxBytes);
      if (bytes.byteLength > limits.maxBytes) throw payloadTooLarge(`the request body is over the limit of ${limits.maxBytes} bytes`);
      const declared = request.headers.get('content-length');
      if (declared !== null && Number(declared) !== bytes.byteLength) {
        // The client went away mid-body; a prefix that happens to parse must not be taken.
        throw invalidInput(`the body ended after ${bytes.byteLength} of the ${declared} bytes its Content-Length announced`, []);
      }
      const encoding = request.headers.get('content-encoding');
      const decoded = isEncoded(encoding) ? await inflateBody(bytes, encoding, limits.maxBytes) : bytes;
      decodedSizes.set(request, decoded.byteLength);
      let text: string;
      try {
        text = strictUtf8.decode(decoded);
      } catch {
        throw invalidInput('the body is not valid UTF-8', [{ pointer: '', detail: 'invalid UTF-8' }]);
      }
      return new RawBody(contentType ?? '', text);
    });
}

/** Turns a RawBody into JSON: 415 for a content type the route does not read, 400 for malformed JSON. */
export function decodeBody(body: unknown, types: JsonTypes = 'json'): unknown {
  if (!(body instanceof RawBody)) return body;
  // No body at all (a DELETE, say): nothing to decode; a route that needs one says so in its schema.
  if (body.text === '') return undefined;
  if (!READS[types](body.contentType)) {
    const expected = types === 'json' ? 'application/json' : 'application/json or text/plain';
    throw new HttpProblem(
      415,
      'Unsupported Media Type',
      body.contentType ? `the body must be ${expected}, not ${body.contentType}` : `the body must be ${expected} (no Content-Type was sent)`,
    );
  }
  const scan = scanJson(body.text, MAX_JSON_DEPTH);
  if (scan.tooDeep) {
    throw invalidInput(`the body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`, [{ pointer: '', detail: 'nested too deeply' }]);
  }
  let value: unknown;
  try {
    value = parseJsonLossless(body.text, scan.longNumbers);
  } catch (err) {
    throw invalidInput(`the body is not valid JSON: ${(err as Error).message}`, [{ pointer: '', detail: 'malformed JSON' }]);
  }
  const illFormed = SURROGATE_ESCAPE.test(body.text) ? illFormedText(value) : [];
  if (illFormed.length > 0) {
    throw invalidInput(
      'the body holds text that is not valid Unicode: a \\u escape of half a surrogate pair',
      illFormed.map((pointer) => ({ pointer, detail: 'holds a lone surrogate (\\uD800-\\uDFFF without its pair)' })),
    );
  }
  return value;
}
