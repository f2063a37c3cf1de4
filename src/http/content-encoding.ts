import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { HttpProblem, invalidInput, payloadTooLarge } from './problem';

/**
 * Decompressors by `Content-Encoding` token. node:zlib rather than the web's DecompressionStream:
 * under Deno the latter inflates each input chunk whole (a 2 KB brotli body became 1 GB in one
 * step), while zlib's streams hand out 16 KB at a time under Bun and Deno alike.
 */
const DECOMPRESSORS = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress } as const;

/** The tokens that mean "not encoded". */
const IDENTITY = /^\s*(?:identity)?\s*$/i;

/** Whether a body with this `Content-Encoding` header needs inflating. */
export const isEncoded = (encoding: string | null): encoding is string => encoding !== null && !IDENTITY.test(encoding);

/**
 * The body inflated as a stream, the limit applied to what comes out: a small "bomb" that would
 * inflate to gigabytes is stopped (413) once it passes `maxBytes`. 415 for an encoding the
 * service does not know, 400 for bytes that are not valid in theirs.
 */
export function inflateBody(compressed: Uint8Array, encoding: string, maxBytes: number): Promise<Uint8Array> {
  const token = encoding.trim().toLowerCase();
  const make = DECOMPRESSORS[token as keyof typeof DECOMPRESSORS];
  if (!make) {
    throw new HttpProblem(415, 'Unsupported Media Type', `Content-Encoding ${JSON.stringify(encoding)} is not supported; send gzip, deflate, br or none`);
  }
  const stream = make();
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    stream.on('data', (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        stream.destroy();
        reject(payloadTooLarge(`the body inflates (${token}) to more than the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks, size)));
    stream.on('error', (err) =>
      reject(invalidInput(`the body is not valid ${token}: ${err.message}`, [{ pointer: '', detail: `not valid ${token}` }])),
    );
    stream.end(compressed);
  });
}
