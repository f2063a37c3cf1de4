import { STATUS_CODES } from 'node:http';
import { rememberPeer } from './client-address';

/**
 * Requests the connection gate answers in this process, without the loopback connection to Bun's
 * server: the collection routes' small POSTs, which are most of the service's requests and for
 * which that connection (two more writes and reads each) was a third of the time. Only a request
 * that is plainly well-formed is taken: everything else goes on to Bun's server, which parses,
 * checks and limits it as before.
 */
export interface InProcess {
  /** The handler of each path served here (POST only), as Bun's server calls it: answers of a small, known size. */
  routes: ReadonlyMap<string, (request: Request) => Response | Promise<Response>>;
  /** The answer to an error that escaped the app, as Bun's server would give it. */
  error(error: unknown): Response;
}

/** The largest body taken here; a larger one goes to the server (with its own cap and timeouts). */
export const IN_PROCESS_MAX_BODY = 64 * 1024;
/** More header lines than this go to the server, which has its own limit on them. */
const MAX_HEADER_LINES = 64;
/** An HTTP method or header name: a token (RFC 9110 5.6.2). */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value without control characters but tab (RFC 9110 5.5). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** A host name or address, with an optional port: what makes a URL of `http://<host><path>`. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
/** Bytes of a request target taken here: visible ASCII. */
const isTargetByte = (b: number) => b > 0x20 && b < 0x7f;

/**
 * The request whose head is `buf[from, end)` (without its last CRLF CRLF) and whose body of
 * `length` bytes follows it, with its route's handler, when it is a POST HTTP/1.1 request to
 * one of `routes` that any server would read the same way; undefined for anything else, which
 * the server is to read.
 * The framing (one Content-Length, no Transfer-Encoding) has been checked by the caller.
 */
export function inProcessRequest(buf: Buffer, from: number, end: number, length: number, routes: InProcess['routes'], peer: string): { request: Request; handler: (request: Request) => Response | Promise<Response> } | undefined {
  if (length > IN_PROCESS_MAX_BODY) return undefined;
  const lineEnd = buf.indexOf(13, from);
  // "POST " then the target, then " HTTP/1.1".
  if (buf[lineEnd - 1] !== 0x31 || buf[lineEnd - 3] !== 0x31) return undefined;
  const targetEnd = lineEnd - 9;
  let query = -1;
  for (let i = from + 5; i < targetEnd; i++) {
    const b = buf[i]!;
    if (!isTargetByte(b)) return undefined;
    if (b === 0x3f /* ? */ && query < 0) query = i;
  }
  const target = buf.toString('latin1', from + 5, targetEnd);
  const handler = routes.get(query < 0 ? target : target.slice(0, query - from - 5));
  if (!handler) return undefined;
  const lines = buf.toString('latin1', lineEnd + 2, end).split('\r\n');
  if (lines.length > MAX_HEADER_LINES) return undefined;
  const headers: Array<[string, string]> = [];
  let host: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name) || !FIELD_VALUE.test(value)) return undefined;
    const lower = name.toLowerCase();
    // What changes how the connection or the body is read stays the server's to handle.
    if (lower === 'connection' || lower === 'expect' || lower === 'upgrade' || lower === 'transfer-encoding') return undefined;
    if (lower === 'host') {
      if (host !== undefined || !HOST.test(value)) return undefined;
      host = value;
    }
    headers.push([name, value]);
  }
  if (host === undefined) return undefined;
  const bodyStart = end + 4;
  let request: Request;
  try {
    request = new Request(`http://${host}${target}`, {
      method: 'POST',
      headers,
      // A copy: the socket's buffer is not the request's to keep.
      body: length > 0 ? new Uint8Array(buf.subarray(bodyStart, bodyStart + length)) : undefined,
    });
  } catch {
    // A host the URL parser refuses (a port over 65535, an address out of range): the server's
    // to answer, as it did before.
    return undefined;
  }
  rememberPeer(request, peer);
  return { request, handler };
}

/**
 * Answers made with their wire form at hand (collection's successes): the head's status line and
 * header lines but Date and Content-Length, and the body. The gate writes them without reading the
 * Response's headers and body back (a tenth of a single event's time on the main thread).
 */
const wireForms = new WeakMap<Response, { head: string; body: string }>();

/** Marks `response` as one whose wire form is `head` (from `answerHead`, plus its own header lines) and `body`. */
export function withWireForm(response: Response, head: string, body: string): Response {
  wireForms.set(response, { head, body });
  return response;
}

/** The status line and header lines of an answer of `status` with `headers`, as the gate writes them (no Date, no Content-Length). */
export function answerHead(status: number, headers: Iterable<[string, string]>): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (const [name, value] of headers) {
    if (name !== 'content-length' && name !== 'date' && name !== 'transfer-encoding') head += `${name}: ${value}\r\n`;
  }
  return head;
}

/** The bytes of `response` on the wire, as Bun's server writes an answer of a known length. */
export async function answerBytes(response: Response): Promise<Buffer> {
  const wire = wireForms.get(response);
  if (wire) {
    const body = Buffer.from(wire.body);
    return Buffer.concat([Buffer.from(`${wire.head}Date: ${httpDate()}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1'), body]);
  }
  const body = response.status === 204 || response.status === 304 ? new Uint8Array(0) : await response.bytes();
  let head = `${answerHead(response.status, response.headers)}Date: ${httpDate()}\r\n`;
  if (response.status !== 204 && response.status !== 304) head += `Content-Length: ${body.length}\r\n`;
  const headBytes = Buffer.from(`${head}\r\n`, 'latin1');
  return body.length === 0 ? headBytes : Buffer.concat([headBytes, body]);
}

/** The Date header's value, made once a second. */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
