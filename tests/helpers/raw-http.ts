import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Whether the server closed the connection (before the last expected answer, or after it within a moment). */
  closed: boolean;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** One response at the start of `buf`, and where it ends; undefined while incomplete. */
function parseOne(buf: Buffer, bodiless: boolean, closed: boolean): { response: RawResponse; end: number } | undefined {
  const headEnd = buf.indexOf(CRLF2);
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(statusLine!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let at = headEnd + 4;
  if (bodiless || status === 204 || status === 304 || (status >= 100 && status < 200)) return { response: { status, headers, body: '' }, end: at };
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        const trailerEnd = buf.indexOf(CRLF2, lineEnd);
        const end = buf.subarray(lineEnd, lineEnd + 4).equals(CRLF2) ? lineEnd + 4 : trailerEnd < 0 ? -1 : trailerEnd + 4;
        if (end < 0) return undefined;
        return { response: { status, headers, body: Buffer.concat(parts).toString() }, end };
      }
      if (buf.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  if (headers['content-length'] !== undefined) {
    const end = at + Number(headers['content-length']);
    return buf.length < end ? undefined : { response: { status, headers, body: buf.subarray(at, end).toString() }, end };
  }
  // Neither: the body runs to the end of the connection.
  return closed ? { response: { status, headers, body: buf.subarray(at).toString() }, end: buf.length } : undefined;
}

/**
 * Sends `bytes` to the server at `url` in one write, on a connection of its own, and reads the
 * answers, in order, until `expect` final answers arrived (interim 1xx answers are skipped), the
 * server closed the connection, or `timeoutMs` passed. `expect` lists, per request, whether its
 * answer has no body (a HEAD's), or is the number of requests when none is a HEAD.
 */
export function rawExchange(url: string, bytes: string | Uint8Array, expect: number | boolean[], timeoutMs = 10_000): Promise<RawExchange> {
  const bodiless = typeof expect === 'number' ? Array<boolean>(expect).fill(false) : expect;
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const responses: RawResponse[] = [];
    let buf = Buffer.alloc(0);
    let closed = false;
    let settled = false;
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses, closed });
    };
    const timer = setTimeout(finish, timeoutMs);
    const parse = () => {
      for (;;) {
        const parsed = responses.length < bodiless.length ? parseOne(buf, bodiless[responses.length]!, closed) : undefined;
        if (!parsed) break;
        buf = buf.subarray(parsed.end);
        if (parsed.response.status >= 200 || parsed.response.status < 100) responses.push(parsed.response);
      }
      // Once all are in, a moment more tells whether the server keeps the connection open.
      if (responses.length === bodiless.length && !closed) setTimeout(finish, 100);
    };
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      parse();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      parse();
      finish();
    });
  });
}
