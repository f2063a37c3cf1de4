import { promisify } from 'node:util';
import { brotliCompress, deflate, gzip, zstdCompress } from 'node:zlib';

/** Encodings of an answer, as ClickHouse offers them when `enable_http_compression=1`; off the event loop. */
const ENCODERS: Record<string, (data: Uint8Array) => Promise<Uint8Array>> = {
  zstd: promisify(zstdCompress),
  br: promisify(brotliCompress),
  gzip: promisify(gzip),
  deflate: promisify(deflate),
};

/** The first encoding of Accept-Encoding that we have and that is not refused with `q=0`. */
function chosenEncoding(acceptEncoding: string | null): string | undefined {
  for (const item of (acceptEncoding ?? '').split(',')) {
    const [name = '', ...parameters] = item.trim().toLowerCase().split(';');
    if (Object.hasOwn(ENCODERS, name) && !parameters.some((p) => /^\s*q=0(?:\.0*)?\s*$/.test(p))) return name;
  }
  return undefined;
}

/**
 * The answer's body, compressed when the client asked for it as ClickHouse wants it asked
 * (`enable_http_compression=1` and an Accept-Encoding we have), and its Content-Encoding.
 */
export async function encodedAnswer(chunks: Uint8Array[], compress: boolean, acceptEncoding: string | null): Promise<{ body: Uint8Array[]; encoding: string | undefined }> {
  const encoding = compress ? chosenEncoding(acceptEncoding) : undefined;
  if (encoding === undefined) return { body: chunks, encoding };
  return { body: [await ENCODERS[encoding]!(Buffer.concat(chunks))], encoding };
}
