import type { Socket, TCPSocketListener } from 'bun';
import type { Logger } from '../log';
import { answerBytes, inProcessRequest, TOKEN, type InProcess } from './gate-in-process';
import { notImplemented } from './methods';
import { HttpProblem } from './problem';
import { logAnswer, newRequestId, type AnsweredRequest } from './request-log';
import { SECURITY_HEADERS } from './security-headers';

/**
 * The service's connections under Bun, in front of Bun's HTTP server, which it reaches on a
 * loopback port: what Bun 1.4.4's server gets wrong about a connection, put right.
 *
 * - Pipelining. Bun closes a connection, answering nothing, when a request arrives on it while
 *   the answer to the one before is still being made (its uWS layer refuses "async pipelining";
 *   only answers made before the handler returns survive it). Every answer of the service that
 *   waits on storage (collection, listings, queries) is made later: two such requests written at
 *   once lost both answers, though the first had been stored. The gate hands the server one
 *   request at a time per connection, holding the next back until the answer ahead of it is out.
 * - CONNECT. After a CONNECT, Bun reads everything that follows as the tunnel's bytes, so a
 *   request behind it was never answered. The service refuses CONNECT (501); the gate takes the
 *   requests after it to a new connection to the server.
 * - Methods Bun does not know (`FOO`, lower-case `get`): Bun closes the connection without a
 *   word. The gate answers them, 501 like the methods the service knows but implements nowhere.
 * - Requests Bun's parser refuses (no Host, a bad Content-Length, headers over its limit, a
 *   version other than HTTP/1.x, ...): Bun answers with a bare status line. The gate answers
 *   with the same status as problem+json, saying what was wrong where it can tell.
 *
 * What the gate answers itself is logged as the app logs its requests. Otherwise it only finds
 * where each request and answer ends: the bytes reach the server and the client as they came, and
 * the server still parses, checks and limits the request. That costs a request a pass through a
 * loopback connection (docs/performance.md#the-connection-gate), which the collection routes'
 * small, plainly well-formed POSTs are spared: the gate answers them in this process, with the
 * handlers the server would call (src/http/gate-in-process.ts). Deno's server answers pipelined
 * requests in order and hands any method to the app: the service runs without the gate there
 * (Deno answers malformed requests in its own way).
 */

export interface GateOptions {
  /** Where clients connect. */
  hostname: string;
  port: number;
  /** Bun's server, listening on 127.0.0.1. */
  upstreamPort: number;
  /** The methods the service answers (for the wording of a 501). */
  served: readonly string[];
  /** The server's own cap on a body (for the wording of its 413). */
  maxRequestBodySize: number;
  log: Logger;
  onAnswered?: (answer: AnsweredRequest) => void;
  /** The requests answered in this process rather than by the server (src/http/gate-in-process.ts). */
  inProcess?: InProcess;
  /** The server's idle timeout: a connection whose requests were all answered here is as idle as the server's. */
  idleTimeoutSeconds: number;
}

export interface Gate {
  readonly port: number;
  /** Stops accepting connections; those open end as their connections to the server do. */
  stop(): void;
  /** Resolves once the answers being made in this process are out. */
  answered(): Promise<void>;
}

/** What the gate's connections share. */
interface GateState {
  stopping: boolean;
  /** The answers being made in this process. */
  answering: Set<Promise<void>>;
}

const UPSTREAM_HOST = '127.0.0.1';
/** The head of an answer that is a live event stream (`GET /events/stream`). */
const EVENT_STREAM = /\r\ncontent-type:[ \t]*text\/event-stream/i;
/** Methods Bun's server routes (uWS's list); it closes the connection on any other. */
const BUN_METHODS = new Set(['ACL', 'BIND', 'CHECKOUT', 'CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE', 'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MOVE', 'NOTIFY', 'OPTIONS', 'PATCH', 'POST', 'PROPFIND', 'PROPPATCH', 'PURGE', 'PUT', 'QUERY', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'TRACE', 'UNBIND', 'UNLINK', 'UNLOCK', 'UNSUBSCRIBE']);
/** Bun's limit on a request's line and headers: past it, Bun refuses the request (431). */
const HEADER_LIMIT = 16 * 1024;
/** The longest head the gate keeps while it waits for the rest; past it the server refuses it anyway. */
const MAX_HEAD = 4 * HEADER_LIMIT;
/** Bytes queued for a socket that cannot take them yet, past which the other side stops being read. */
const HIGH_WATER = 256 * 1024;
const CRLF2 = Buffer.from('\r\n\r\n');
const LF = 10;
const SPACE = 32;

/** Client addresses of the connections the gate relays, by the local port of its connection to the server. */
const peers = new Map<number, string>();

/** The client behind a connection the server sees from the gate (its address and port there), if it is one. */
export function gatedPeer(address: string, port: number): string | undefined {
  return address === UPSTREAM_HOST ? peers.get(port) : undefined;
}

/** Whether `buf` holds `word` (in lower case) at `at`, its letters in either case; no string is made. */
function holds(buf: Uint8Array, at: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    const b = buf[at + k];
    const c = word.charCodeAt(k);
    if (b !== c && !(c >= 0x61 && c <= 0x7a && b === c - 0x20)) return false;
  }
  return true;
}

const skipBlanks = (buf: Uint8Array, at: number) => {
  while (buf[at] === SPACE || buf[at] === 9) at++;
  return at;
};

/**
 * How the body after the head `buf[from, end)` is framed, read byte by byte (a string per header
 * was a measurable share of a small request's time): its length (0 without one), `chunked`, or
 * undefined for anything else (two lengths, other codings, a length that is no number), which
 * the full reading below decides.
 */
function framing(buf: Uint8Array, from: number, end: number): number | 'chunked' | undefined {
  let length = -1;
  let chunked = false;
  for (let at = buf.indexOf(LF, from) + 1; at > 0 && at < end; at = buf.indexOf(LF, at) + 1) {
    const first = buf[at]! | 0x20;
    if (first === 0x63 /* c */ && holds(buf, at, 'content-length:')) {
      if (length >= 0 || chunked) return undefined;
      const digits = skipBlanks(buf, at + 15);
      let i = digits;
      length = 0;
      for (; buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) length = length * 10 + buf[i]! - 0x30;
      if (i === digits || i - digits > 15 || buf[skipBlanks(buf, i)] !== 13) return undefined;
    } else if (first === 0x74 /* t */ && holds(buf, at, 'transfer-encoding:')) {
      if (length >= 0 || chunked) return undefined;
      const value = skipBlanks(buf, at + 18);
      if (!holds(buf, value, 'chunked') || buf[skipBlanks(buf, value + 7)] !== 13) return undefined;
      chunked = true;
    }
  }
  return chunked ? 'chunked' : Math.max(length, 0);
}

/** The method of a request line starting at `from` (its space at `space`); the usual ones without making a string. */
function methodAt(buf: Buffer, from: number, space: number): string {
  const n = space - from;
  if (n === 3 && buf[from] === 0x47 && buf[from + 1] === 0x45 && buf[from + 2] === 0x54) return 'GET';
  if (n === 4 && buf[from] === 0x50 && buf[from + 1] === 0x4f && buf[from + 2] === 0x53 && buf[from + 3] === 0x54) return 'POST';
  return buf.toString('latin1', from, space);
}

const HTTP1 = ' HTTP/1.';

/** Whether the request line ending at the LF `lineEnd` ends in ` HTTP/1.0` or ` HTTP/1.1` and CR. */
function http1(buf: Uint8Array, lineEnd: number): boolean {
  const at = lineEnd - 10;
  if (at < 0 || buf[lineEnd - 1] !== 13 || (buf[lineEnd - 2] !== 0x31 && buf[lineEnd - 2] !== 0x30)) return false;
  for (let k = 0; k < HTTP1.length; k++) if (buf[at + k] !== HTTP1.charCodeAt(k)) return false;
  return true;
}

/** A request head read whole, as strings: for what the quick reading leaves undecided, and the wording of refusals. */
interface RequestHead {
  method: string;
  target: string;
  version: string;
  /** The body's framing: a length, chunked, or unreadable (the server refuses the request). */
  body: number | 'chunked' | 'invalid';
  /** Why the server would refuse this head, where the gate can tell (for the wording of a 400). */
  fault?: string;
  requestId?: string;
}

function parseRequestHead(text: string): RequestHead {
  const lines = text.split('\r\n');
  const [method = '', target = '', version = '', ...extra] = lines[0]!.split(' ');
  const head: RequestHead = { method, target, version, body: 0 };
  if (extra.length > 0 || version === '' || !TOKEN.test(method)) head.fault = 'the request line is not METHOD TARGET HTTP/1.1';
  else if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') head.fault = `the service speaks HTTP/1.1 and HTTP/1.0, not ${version.slice(0, 20)}`;
  else if (!target.startsWith('/') && !/^https?:\/\//i.test(target) && method !== 'CONNECT') head.fault = 'the request target must be a path, starting with /';
  const lengths = new Set<string>();
  let codings: string | undefined;
  let host = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
      head.fault ??= `the header line "${line.slice(0, 40)}" is not NAME: VALUE`;
      continue;
    }
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) head.fault ??= `the header ${line.slice(0, colon)} holds a control character`;
    if (name === 'content-length') lengths.add(value);
    else if (name === 'transfer-encoding') codings = codings === undefined ? value : `${codings}, ${value}`;
    else if (name === 'host') host = true;
    else if (name === 'x-request-id') head.requestId = value.slice(0, 64);
  }
  if (!host && version === 'HTTP/1.1') head.fault ??= 'an HTTP/1.1 request must have a Host header';
  const [length] = lengths;
  if (codings !== undefined) {
    if (length !== undefined) {
      head.body = 'invalid';
      head.fault ??= 'a request must not have both Content-Length and Transfer-Encoding';
    } else if (codings.toLowerCase() !== 'chunked') {
      head.body = 'invalid';
      head.fault ??= `Transfer-Encoding "${codings.slice(0, 40)}" is not supported: only chunked`;
    } else head.body = 'chunked';
  } else if (lengths.size > 1 || (length !== undefined && !/^\d{1,15}$/.test(length))) {
    head.body = 'invalid';
    head.fault ??= 'Content-Length must be one whole number of bytes';
  } else if (length !== undefined) head.body = Number(length);
  return head;
}

/** Where a chunked body ends, read a piece at a time. */
class ChunkedBody {
  /** Whether trailer fields follow the last chunk (Bun refuses a request with them). */
  trailers = false;
  private state: 'size' | 'data' | 'crlf' | 'trailer' = 'size';
  private remaining = 0;
  private line = '';

  /** The index in `buf` just past the body, -1 while it goes on, -2 if it is not chunked framing. */
  scan(buf: Uint8Array, from: number): number {
    let i = from;
    while (i < buf.length) {
      if (this.state === 'data' || this.state === 'crlf') {
        const take = Math.min(this.remaining, buf.length - i);
        i += take;
        this.remaining -= take;
        if (this.remaining > 0) return -1;
        if (this.state === 'data') {
          this.state = 'crlf';
          this.remaining = 2;
        } else this.state = 'size';
        continue;
      }
      const lf = buf.indexOf(LF, i);
      const end = lf < 0 ? buf.length : lf;
      this.line += Buffer.from(buf.buffer, buf.byteOffset + i, end - i).toString('latin1');
      if (this.line.length > 4096) return -2;
      if (lf < 0) return -1;
      i = lf + 1;
      const line = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
      this.line = '';
      if (this.state === 'trailer') {
        if (line === '') return i;
        this.trailers = true;
        continue;
      }
      const size = line.split(';')[0]!.trim();
      if (!/^[0-9a-fA-F]{1,15}$/.test(size)) return -2;
      this.remaining = parseInt(size, 16);
      this.state = this.remaining === 0 ? 'trailer' : 'data';
    }
    return -1;
  }
}

/** A body's end: a length left to read, chunks, or (an answer only) the end of the connection. */
type Body = { left: number } | ChunkedBody | 'to-close';

/** The index in `buf` just past the body, -1 while it goes on, -2 if its framing is broken. */
function scanBody(body: Body, buf: Uint8Array, from: number): number {
  if (body === 'to-close') return -1;
  if (body instanceof ChunkedBody) return body.scan(buf, from);
  const take = Math.min(body.left, buf.length - from);
  body.left -= take;
  return body.left === 0 ? from + take : -1;
}

/** A request handed to the server, until its answer is out. */
interface InFlight {
  method: string;
  /** Its head is `data[from, end)`, read whole only if the server refuses it. */
  data: Buffer;
  from: number;
  end: number;
  started: number;
  /** Answered in this process: the server knows nothing of it. */
  inProcess?: true;
}

/** What a log line and a refusal say of a request. */
interface Described {
  method: string;
  target: string;
  started: number;
  fault?: string;
  body?: number | 'chunked' | 'invalid';
  version?: string;
  requestId?: string;
}

function describe(request: InFlight | undefined): Described | undefined {
  if (!request) return undefined;
  const head = parseRequestHead(request.data.toString('latin1', request.from, request.end));
  return { ...head, started: request.started };
}

/** The bare answers Bun's parser gives, and what each says in problem+json. */
const BUN_REFUSALS = new Map<string, (request: Described | undefined, options: GateOptions) => HttpProblem>([
  ['HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', (r) => new HttpProblem(400, 'Bad Request', r?.fault ?? 'the request is not well-formed HTTP/1.1')],
  ['HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', () => new HttpProblem(431, 'Request Header Fields Too Large', `the request line and headers are over the limit of ${HEADER_LIMIT} bytes`)],
  ['HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', () => new HttpProblem(413, 'Payload Too Large', 'the chunk extensions of the body are over the limit')],
  [
    'HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\n\r\n',
    (r, o) => new HttpProblem(413, 'Payload Too Large', `${typeof r?.body === 'number' ? `the request body is ${r.body} bytes; ` : ''}the limit of every route is ${o.maxRequestBodySize} bytes`),
  ],
  [
    'HTTP/1.1 505 HTTP Version Not Supported\r\nConnection: close\r\n\r\n',
    (r) =>
      new HttpProblem(505, 'HTTP Version Not Supported', r?.version?.startsWith('HTTP/') ? `the service speaks HTTP/1.1 and HTTP/1.0, not ${r.version.slice(0, 20)}` : 'the request line is not METHOD TARGET HTTP/1.1, with lines ending in CRLF'),
  ],
]);
/** The longest of those: an answer with a longer head is the app's. */
const LONGEST_REFUSAL = Math.max(...[...BUN_REFUSALS.keys()].map((k) => k.length));

type RelaySocket = Socket<Relay>;
/** Bun's sockets stop and resume reading with these, which its type declarations leave out. */
const pausable = (socket: RelaySocket) => socket as unknown as { pause(): void; resume(): void };

/**
 * Bytes for one side, collected while a chunk is read and written at once when it is done: a
 * write for an answer's head and another for its body cost twice the system calls. Pieces of one
 * chunk that follow each other are written as one range of it, uncopied.
 */
class Outbox {
  private buf: Buffer | undefined;
  private start = 0;
  private end = 0;
  private more: Buffer[] = [];

  add(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.buf === undefined) {
      this.buf = buf;
      this.start = start;
      this.end = end;
    } else if (this.more.length === 0 && buf === this.buf && start === this.end) this.end = end;
    else this.more.push(buf.subarray(start, end));
  }

  /** What was collected, as one buffer, and empties the box; undefined if nothing was. */
  take(): Buffer | undefined {
    if (this.buf === undefined) return undefined;
    const first = this.start === 0 && this.end === this.buf.length ? this.buf : this.buf.subarray(this.start, this.end);
    const all = this.more.length === 0 ? first : Buffer.concat([first, ...this.more]);
    this.buf = undefined;
    this.more = [];
    return all;
  }
}

/** One client connection and its connection to the server. */
class Relay {
  upstream: RelaySocket | undefined;
  /** Bytes for each side that it could not take yet. */
  private toServer: Buffer[] = [];
  private toServerBytes = 0;
  private toClient: Buffer[] = [];
  private toClientBytes = 0;
  private outServer = new Outbox();
  private outClient = new Outbox();

  /** Where the client's bytes are: at a request's start, in its head, in its body, in the body of one the gate answers, or past reading. */
  private reading: 'start' | 'head' | 'body' | 'skip' | 'pass' = 'start';
  private headBytes: Buffer | undefined;
  private headForwarded = 0;
  private requestBody: Body | undefined;
  /** The next requests, held back until the answer ahead of them is out. */
  private held: Buffer | undefined;
  private inFlight: InFlight | undefined;

  private answer: 'head' | 'body' | 'pass' = 'head';
  private answerHead: Buffer | undefined;
  private answerBody: Body | undefined;
  /** The answer being relayed is a live event stream, which has no end of its own. */
  private answerEndless = false;

  private pausedFor = { held: false, server: false };
  private clientEnded = false;
  private ending = false;
  private ended = false;
  private closed = false;
  /** When a request was last answered in this process (performance.now()). */
  private answeredHere = -Infinity;
  /** The server closed its connection while a request was being answered here: the client's ends after that answer. */
  private endAfterAnswer = false;

  constructor(
    readonly client: RelaySocket,
    private readonly options: GateOptions,
    private readonly gate: GateState,
  ) {}

  connect(): void {
    const relay = this;
    void Bun.connect<Relay>({
      hostname: UPSTREAM_HOST,
      port: this.options.upstreamPort,
      data: this,
      socket: {
        open(up) {
          if (relay.closed || relay.upstream !== undefined) return void up.terminate();
          relay.upstream = up;
          peers.set(up.localPort, relay.client.remoteAddress);
          relay.flushToServer();
        },
        // A connection given up after a CONNECT may still say something: it is not heard.
        data: (up, chunk) => void (up === relay.upstream && relay.fromServer(chunk)),
        drain: (up) => void (up === relay.upstream && relay.flushToServer()),
        close: (up) => relay.serverClosed(up),
        error: () => {},
        connectError: () => relay.close(),
      },
    }).catch(() => relay.close());
  }

  /** The client sent `chunk`. */
  fromClient(chunk: Buffer): void {
    if (this.held) {
      this.held = Buffer.concat([this.held, chunk]);
      return;
    }
    this.readRequests(chunk);
    this.flushOut();
  }

  private readRequests(buf: Buffer): void {
    let at = 0;
    while (at < buf.length && !this.closed) {
      if (this.reading === 'pass') return this.outServer.add(buf, at, buf.length);
      if (this.reading === 'body' || this.reading === 'skip') {
        const end = scanBody(this.requestBody!, buf, at);
        if (end === -2) {
          // The server refuses the body; it reads the rest as it will.
          this.reading = 'pass';
          continue;
        }
        const stop = end < 0 ? buf.length : end;
        if (this.reading === 'body') this.outServer.add(buf, at, stop);
        at = stop;
        if (end >= 0) this.reading = 'start';
        continue;
      }
      if (this.reading === 'start') {
        if (this.inFlight) {
          this.held = Buffer.from(buf.subarray(at));
          this.pause('held');
          return;
        }
        this.reading = 'head';
        this.headBytes = undefined;
        this.headForwarded = 0;
      }
      at = this.readHead(buf, at);
    }
  }

  /** Reads a request head from `buf` at `at`; the index where its body starts, or the end of `buf`. */
  private readHead(buf: Buffer, at: number): number {
    const joined = this.headBytes !== undefined;
    const data = joined ? Buffer.concat([this.headBytes!, buf.subarray(at)]) : buf;
    const from = joined ? 0 : at;
    const before = joined ? this.headBytes!.length : 0;
    const end = data.indexOf(CRLF2, from);
    const space = data.indexOf(SPACE, from);
    const lineEnd = data.indexOf(LF, from);
    const method = space > from && (lineEnd < 0 || space < lineEnd) ? methodAt(data, from, space) : undefined;
    if (end < 0) {
      // A method Bun does not know is answered here: the server must not see its head. Any other
      // head goes on as it comes, so that the server answers one it cannot read (bare LF line
      // endings, one over its limit).
      const forServer = method !== undefined ? BUN_METHODS.has(method) || !TOKEN.test(method) : lineEnd >= 0 || data.length - from > 64;
      this.headBytes = Buffer.from(data.subarray(from));
      if (forServer) {
        this.outServer.add(this.headBytes, this.headForwarded, this.headBytes.length);
        this.headForwarded = this.headBytes.length;
        if (this.headBytes.length > MAX_HEAD) this.reading = 'pass';
      } else if (this.headBytes.length > MAX_HEAD) {
        this.answerHere({ method: method ?? '', target: '', started: performance.now() }, true);
      }
      return buf.length;
    }
    const headEnd = end + 4;
    const rest = at + headEnd - from - before;
    this.headBytes = undefined;
    const started = performance.now();
    // The usual request, read without making strings: a method Bun knows, a path, HTTP/1.x, a plain framing.
    const quick = method !== undefined && BUN_METHODS.has(method) && data[space + 1] === 0x2f && lineEnd > space && http1(data, lineEnd) ? framing(data, from, end + 2) : undefined;
    if (quick !== undefined) {
      this.inFlight = { method: method!, data, from, end, started };
      // Taken here only whole, and within the server's limits (which refuses a request past them).
      const whole = !joined && typeof quick === 'number' && data.length - headEnd >= quick && quick <= this.options.maxRequestBodySize && end - from <= HEADER_LIMIT;
      if (whole && method === 'POST' && this.options.inProcess && !this.gate.stopping) {
        const taken = inProcessRequest(data, from, end, quick, this.options.inProcess.routes, this.client.remoteAddress);
        if (taken) {
          this.inFlight.inProcess = true;
          this.answerInProcess(taken.request, taken.handler, this.options.inProcess.error);
          this.reading = 'start';
          return headEnd + quick;
        }
      }
      this.outServer.add(data, from + this.headForwarded, headEnd);
      this.startBody(method === 'CONNECT' ? 0 : quick, 'body');
      return rest;
    }
    const head = parseRequestHead(data.toString('latin1', from, end));
    if (!BUN_METHODS.has(head.method) && head.fault === undefined && head.body !== 'invalid') {
      // Bun would drop it without a word: answered here, its body read past.
      this.answerHere({ ...head, started }, false);
      this.startBody(head.body, 'skip');
      return rest;
    }
    this.inFlight = { method: head.method, data, from, end, started };
    this.outServer.add(data, from + this.headForwarded, headEnd);
    if (head.fault !== undefined || head.body === 'invalid' || !BUN_METHODS.has(head.method)) {
      // The server refuses it and closes the connection (or reads it otherwise than the gate
      // would): whatever follows is the server's to read as it will.
      this.reading = 'pass';
      return rest;
    }
    this.startBody(head.method === 'CONNECT' ? 0 : head.body, 'body');
    return rest;
  }

  /** Answers `request` in this process; the requests behind it wait for its answer, as behind the server's. */
  private answerInProcess(request: Request, handler: (request: Request) => Response | Promise<Response>, error: InProcess['error']): void {
    const answer = (async () => {
      try {
        return await handler(request);
      } catch (err) {
        return error(err);
      }
    })();
    const out = answer.then(answerBytes).then(
      (bytes) => {
        if (this.closed) return;
        this.answeredHere = performance.now();
        this.outClient.add(bytes, 0, bytes.length);
        this.answered();
        this.flushOut();
        if (this.endAfterAnswer) this.endClient();
      },
      // An answer that cannot be read whole (a failing stream): the connection cannot go on.
      () => this.close(),
    );
    this.gate.answering.add(out);
    void out.finally(() => this.gate.answering.delete(out));
  }

  private startBody(framing: number | 'chunked', reading: 'body' | 'skip'): void {
    if (framing === 0) {
      this.reading = 'start';
      return;
    }
    this.requestBody = framing === 'chunked' ? new ChunkedBody() : { left: framing };
    this.reading = reading;
  }

  /** Answers a request the server would drop without a word (a method it does not know): 501. */
  private answerHere(request: Described, close: boolean): void {
    this.writeProblem(notImplemented(request.method, this.options.served), request, close);
    if (close) this.endClient();
  }

  private writeProblem(problem: HttpProblem, request: Described | undefined, close: boolean): void {
    const id = request?.requestId || newRequestId();
    const body = JSON.stringify(problem.toBody());
    const headers: Record<string, string> = {
      'content-type': 'application/problem+json',
      ...SECURITY_HEADERS,
      ...problem.extra.headers,
      'x-request-id': id,
      date: new Date().toUTCString(),
      'content-length': String(Buffer.byteLength(body)),
      ...(close ? { connection: 'close' } : {}),
    };
    const head = `HTTP/1.1 ${problem.status} ${problem.title}\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;
    const bytes = Buffer.from(head + body);
    this.outClient.add(bytes, 0, bytes.length);
    logAnswer(this.options.log, this.options.onAnswered, { method: request?.method ?? '', url: request?.target ?? '' }, {
      id,
      route: undefined,
      status: problem.status,
      ms: request ? performance.now() - request.started : undefined,
      collected: false,
    });
  }

  /** The server sent `chunk`: answers, passed on as they come; the end of each is looked for. */
  fromServer(chunk: Buffer): void {
    this.readAnswers(chunk);
    this.flushOut();
  }

  private readAnswers(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.closed) {
      if (this.answer === 'pass') return this.outClient.add(chunk, at, chunk.length);
      if (this.answer === 'body') {
        const end = scanBody(this.answerBody!, chunk, at);
        const stop = end < 0 ? chunk.length : end;
        this.outClient.add(chunk, at, stop);
        at = stop;
        if (end === -2) this.answer = 'pass';
        else if (end >= 0) this.answered();
        continue;
      }
      const joined = this.answerHead !== undefined;
      const data = joined ? Buffer.concat([this.answerHead!, chunk.subarray(at)]) : chunk;
      const from = joined ? 0 : at;
      const before = joined ? this.answerHead!.length : 0;
      const end = data.indexOf(CRLF2, from);
      if (end < 0) {
        this.answerHead = Buffer.from(data.subarray(from));
        if (this.answerHead.length > MAX_HEAD) {
          this.answer = 'pass';
          this.outClient.add(this.answerHead, 0, this.answerHead.length);
          this.answerHead = undefined;
        }
        return;
      }
      this.answerHead = undefined;
      const headEnd = end + 4;
      at += headEnd - from - before;
      if (headEnd - from <= LONGEST_REFUSAL) {
        const refusal = BUN_REFUSALS.get(data.toString('latin1', from, headEnd));
        if (refusal) {
          // Bun refused the request and closes the connection: the same answer, in problem+json.
          const request = describe(this.inFlight);
          if (request && request.fault === undefined && this.requestBody instanceof ChunkedBody) {
            request.fault = this.requestBody.trailers ? 'the chunked body ends with trailer fields, which the service does not take' : 'the chunked body is not well-formed';
          }
          this.inFlight = undefined;
          this.answer = 'pass';
          this.writeProblem(refusal(request, this.options), request, true);
          this.endClient();
          return;
        }
      }
      this.outClient.add(data, from, headEnd);
      this.readAnswerHead(data, from, end);
    }
  }

  /** What follows an answer's head (`data[from, end)`): its body, or the next answer. */
  private readAnswerHead(data: Buffer, from: number, end: number): void {
    const status = (data[from + 9]! - 0x30) * 100 + (data[from + 10]! - 0x30) * 10 + (data[from + 11]! - 0x30);
    if (status === 101 || (status >= 200 && status < 300 && this.inFlight?.method === 'CONNECT')) {
      // The connection is no longer HTTP (the service switches protocols for no request today).
      this.answer = 'pass';
      this.reading = 'pass';
      return;
    }
    if (status < 200) return;
    const body = framing(data, from, end + 2);
    if (this.inFlight?.method === 'HEAD' || status === 204 || status === 304 || body === 0) return this.answered();
    this.answerBody = body === 'chunked' ? new ChunkedBody() : body !== undefined ? { left: body } : 'to-close';
    this.answer = 'body';
    this.answerEndless = EVENT_STREAM.test(data.toString('latin1', from, end));
  }

  /** An answer is out whole: the next request may go. */
  private answered(): void {
    const request = this.inFlight;
    this.inFlight = undefined;
    this.answer = 'head';
    this.answerBody = undefined;
    if (request?.method === 'CONNECT') {
      // Bun now reads this connection as the tunnel: the next requests go on a new one.
      this.flushOut();
      const old = this.upstream;
      this.upstream = undefined;
      if (old) {
        peers.delete(old.localPort);
        old.terminate();
      }
      this.connect();
    }
    if (this.held && this.reading === 'start') {
      const held = this.held;
      this.held = undefined;
      this.resume('held');
      this.readRequests(held);
    }
    if (this.clientEnded) this.settleEnd();
  }

  private flushOut(): void {
    const forServer = this.outServer.take();
    if (forServer) this.writeToServer(forServer);
    const forClient = this.outClient.take();
    if (forClient) this.writeToClient(forClient);
  }

  private writeToServer(bytes: Buffer): void {
    if (this.upstream === undefined || this.toServer.length > 0) {
      this.toServer.push(Buffer.from(bytes));
      this.toServerBytes += bytes.length;
      if (this.toServerBytes > HIGH_WATER) this.pause('server');
      return;
    }
    const written = Math.max(0, this.upstream.write(bytes));
    if (written < bytes.length) {
      this.toServer.push(Buffer.from(bytes.subarray(written)));
      this.toServerBytes += bytes.length - written;
      this.pause('server');
    }
  }

  /** The server can take more (or has just been connected). */
  flushToServer(): void {
    while (this.toServer.length > 0 && this.upstream) {
      const next = this.toServer[0]!;
      const written = Math.max(0, this.upstream.write(next));
      this.toServerBytes -= written;
      if (written < next.length) {
        this.toServer[0] = next.subarray(written);
        return;
      }
      this.toServer.shift();
    }
    this.resume('server');
  }

  private writeToClient(bytes: Buffer): void {
    if (this.closed) return;
    const written = this.toClient.length > 0 ? 0 : Math.max(0, this.client.write(bytes));
    if (written < bytes.length) {
      this.toClient.push(Buffer.from(bytes.subarray(written)));
      this.toClientBytes += bytes.length - written;
      // The client reads slowly: stop reading the server's answer until it catches up (also when
      // bytes were already waiting, or a client that reads nothing has the gate hold all of it).
      if (this.toClientBytes > HIGH_WATER && this.upstream) pausable(this.upstream).pause();
    }
  }

  /** The client can take more. */
  flushToClient(): void {
    while (this.toClient.length > 0) {
      const next = this.toClient[0]!;
      const written = Math.max(0, this.client.write(next));
      this.toClientBytes -= written;
      if (written < next.length) {
        this.toClient[0] = next.subarray(written);
        return;
      }
      this.toClient.shift();
    }
    if (this.upstream) pausable(this.upstream).resume();
    if (this.ending) this.endClient();
  }

  private pause(reason: 'held' | 'server'): void {
    this.pausedFor[reason] = true;
    pausable(this.client).pause();
  }

  private resume(reason: 'held' | 'server'): void {
    this.pausedFor[reason] = false;
    if (!this.pausedFor.held && !this.pausedFor.server) pausable(this.client).resume();
  }

  /** The client will send nothing more: what it sent is answered, then the connection ends. */
  clientFinished(): void {
    // A live event stream ends only when its client leaves: a client that has finished sending
    // wants nothing more of it, and Bun's server, which knows no half-closed connections, ended
    // the stream at that moment too.
    if (this.answer === 'body' && this.answerEndless) return this.close();
    this.clientEnded = true;
    this.settleEnd();
    this.flushOut();
  }

  /**
   * Once the client has sent its last byte, the connection ends when what it sent is answered:
   * held requests first; a body left unfinished gets the server's 408 once its body timeout has
   * passed; a head left unfinished, which the server would drop without a word, a 400 now.
   */
  private settleEnd(): void {
    // In a request the server refused, it closes the connection once it has answered.
    if (this.reading === 'pass' || this.held || this.inFlight) return;
    if (this.reading === 'head' && this.headBytes !== undefined) {
      const line = this.headBytes.toString('latin1', 0, Math.min(this.headBytes.length, 2048)).split('\r\n')[0]!.split(' ');
      this.writeProblem(new HttpProblem(400, 'Bad Request', 'the connection ended before the request headers did'), { method: line[0]!, target: line[1] ?? '', started: performance.now() }, true);
    }
    this.endClient();
  }

  /** Ends the client's connection once what is queued for it is written. */
  private endClient(): void {
    this.flushOut();
    this.ending = true;
    if (this.toClient.length > 0 || this.ended) return;
    this.ended = true;
    this.client.end();
  }

  serverClosed(up: RelaySocket): void {
    peers.delete(up.localPort);
    if (up !== this.upstream) return;
    this.upstream = undefined;
    if (this.activeHere()) {
      // The server timed out a connection it saw nothing on, while the client's requests were
      // answered here: the client is not idle, and keeps its connection (a new one to the server).
      this.connect();
      return;
    }
    if (this.inFlight?.inProcess) {
      // The server is stopping: the answer being made here goes out first.
      this.endAfterAnswer = true;
      return;
    }
    // An answer that runs to the end of the connection ends here; either way nothing more comes.
    this.endClient();
  }

  /**
   * Whether the client is busy with requests answered in this process (one in flight, or one
   * answered within the idle timeout) and owes the server nothing: no request of its is with
   * the server, whole or in part, and no answer from it is being read.
   */
  private activeHere(): boolean {
    if (this.gate.stopping || this.closed || this.clientEnded) return false;
    if (this.inFlight?.inProcess !== true && performance.now() - this.answeredHere > this.options.idleTimeoutSeconds * 1000) return false;
    return (this.inFlight === undefined || this.inFlight.inProcess === true) && (this.reading === 'start' || this.held !== undefined) && this.answer === 'head' && this.answerHead === undefined && this.toServer.length === 0;
  }

  /** The client's connection is gone: so is the one to the server. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.upstream) {
      peers.delete(this.upstream.localPort);
      this.upstream.terminate();
    }
    this.client.terminate();
  }
}

/** Opens the gate on `hostname`:`port`; throws if it cannot listen there. */
export function openGate(options: GateOptions): Gate {
  const gate: GateState = { stopping: false, answering: new Set() };
  const listener: TCPSocketListener<Relay> = Bun.listen<Relay>({
    hostname: options.hostname,
    port: options.port,
    // The port is this process's alone: a second service started on it fails to start, instead of
    // silently taking half the connections (and their events, into its own DATA_DIR).
    exclusive: true,
    // A client that sends its requests and then its FIN still gets its answers.
    allowHalfOpen: true,
    socket: {
      open(client) {
        const relay = new Relay(client, options, gate);
        client.data = relay;
        relay.connect();
      },
      data: (client, chunk) => client.data.fromClient(chunk),
      drain: (client) => client.data.flushToClient(),
      end: (client) => client.data.clientFinished(),
      close: (client) => client.data.close(),
      error: () => {},
    },
  });
  return {
    port: listener.port,
    stop: () => {
      gate.stopping = true;
      listener.stop();
    },
    answered: async () => {
      while (gate.answering.size > 0) await Promise.all(gate.answering);
    },
  };
}
