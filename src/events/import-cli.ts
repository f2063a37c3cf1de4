/**
 * `npm run import -- events.ndjson[.gz]`: sends a file to POST /events/import of a running
 * service, over HTTP (so it works while the service holds the embedded engine's data directory,
 * and against the server backend alike). The service and key come from the configuration
 * (.env.defaults, .env, environment): IMPORT_URL (default: this configuration's host and port)
 * and IMPORT_KEY (default: the first of PRIVATE_API_KEYS). Files larger than
 * IMPORT_MAX_BODY_BYTES go in several requests, cut at line ends, gzip-compressed on the way.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { loadConfig } from '../config';
import { localUrl } from '../http/serve';
import { IMPORT_PATH } from './import-routes';
import type { ImportSummary } from './import';

/** Fast compression: the link is usually local, and the service's CPU is the scarce part. */
const GZIP_LEVEL = 1;
/** A part's share of the body limit, uncompressed: compression only makes it smaller. */
const PART_SHARE = 0.9;

/** The file's bytes in pieces that each end at a line end (the last may not). */
async function* wholeLines(path: string): AsyncIterable<Uint8Array> {
  const file = createReadStream(path);
  const source: AsyncIterable<Uint8Array> = path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
  let carry = new Uint8Array(0);
  for await (const chunk of source) {
    const joined = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const end = joined.lastIndexOf(10) + 1;
    if (end > 0) yield joined.subarray(0, end);
    carry = Uint8Array.from(joined.subarray(end));
  }
  if (carry.length > 0) yield carry;
}

function countLines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

async function main(path: string): Promise<void> {
  const config = loadConfig();
  const url = (process.env.IMPORT_URL || localUrl(config.host, config.port)) + IMPORT_PATH;
  const key = process.env.IMPORT_KEY || config.privateApiKeys[0];
  if (!key) throw new Error('no key: set IMPORT_KEY (a private key of the workspace to import into)');
  const partBytes = Math.floor(config.importMaxBodyBytes * PART_SHARE);
  const pieces = wholeLines(path)[Symbol.asyncIterator]();
  const total: ImportSummary = { stored: 0, duplicates: 0, suppressed: 0, heldBack: 0, errorCount: 0, errors: [] };
  const started = performance.now();
  let firstLine = 0;
  let next = await pieces.next();
  while (!next.done) {
    let sent = 0;
    let lines = 0;
    async function* partPieces(): AsyncIterable<Uint8Array> {
      while (!next.done && (sent === 0 || sent + next.value.length <= partBytes)) {
        sent += next.value.length;
        lines += countLines(next.value);
        yield next.value;
        next = await pieces.next();
      }
    }
    const compressed = Readable.from(partPieces()).pipe(createGzip({ level: GZIP_LEVEL }))[Symbol.asyncIterator]();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const piece = await compressed.next();
        if (piece.done) controller.close();
        else controller.enqueue(piece.value as Uint8Array);
      },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = await res.text();
    if (res.status !== 200) throw new Error(`${IMPORT_PATH} answered ${res.status} for the part from line ${firstLine + 1}: ${answer}`);
    const part = JSON.parse(answer) as ImportSummary;
    total.stored += part.stored;
    total.duplicates += part.duplicates;
    total.suppressed += part.suppressed;
    total.heldBack += part.heldBack;
    total.errorCount += part.errorCount;
    total.errors.push(...part.errors.map((e) => ({ line: e.line + firstLine, detail: e.detail })));
    firstLine += lines;
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ ...total, seconds: Number(seconds.toFixed(2)), linesPerSecond: Math.round(firstLine / seconds) })}\n`);
}

const path = process.argv[2];
if (!path) {
  process.stderr.write('usage: npm run import -- <file.ndjson | file.ndjson.gz>\n');
  process.exit(2);
}
await main(path).catch((err: unknown) => {
  process.stderr.write(`import failed: ${(err as Error).message}\n`);
  process.exit(1);
});
