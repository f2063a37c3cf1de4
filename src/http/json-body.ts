import { Elysia } from 'elysia';
import { parseJsonLossless } from '../lossless-json';
import { HttpProblem, invalidInput, payloadTooLarge } from './problem';

/** A request body read but not yet decoded: decoding waits until the caller is authenticated. */
export class RawBody {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads request bodies as text within `maxBytes` (413 beyond it), leaving the decoding to
 * `decodeBody`, which the auth macro calls once the key has been checked.
 */
export function jsonBody(maxBytes: number) {
  return new Elysia({ name: 'json-body' })
    .onRequest(({ request }) => {
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > maxBytes) throw payloadTooLarge(`the request body is ${length} bytes; the limit is ${maxBytes}`);
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const text = await request.text();
      if (Buffer.byteLength(text) > maxBytes) throw payloadTooLarge(`the request body is over the limit of ${maxBytes} bytes`);
      return new RawBody(contentType ?? '', text);
    });
}

/** Turns a RawBody into JSON: 415 for a content type other than JSON, 400 for malformed JSON. */
export function decodeBody(body: unknown): unknown {
  if (!(body instanceof RawBody)) return body;
  // No body at all (a DELETE, say): nothing to decode; a route that needs one says so in its schema.
  if (body.text === '') return undefined;
  if (!JSON_TYPE.test(body.contentType)) {
    throw new HttpProblem(
      415,
      'Unsupported Media Type',
      body.contentType ? `the body must be application/json, not ${body.contentType}` : 'the body must be application/json (no Content-Type was sent)',
    );
  }
  try {
    return parseJsonLossless(body.text);
  } catch (err) {
    throw invalidInput(`the body is not valid JSON: ${(err as Error).message}`, [{ pointer: '', detail: 'malformed JSON' }]);
  }
}
