import type { ResultHold } from './result-budget';

/** Characters of text encoded per piece: a large answer is never copied whole. */
const PIECE_CHARS = 1 << 20;

/**
 * An answer's body made of `parts` (text, or bytes as the engine gave them), handed out a piece
 * at a time as the client reads it (Bun asks for the next piece once the socket takes the last,
 * so a client that reads nothing holds up the pieces, not the process). What `hold` charged for
 * them is given back as they go, and all of it at the end or when the client goes away. The
 * parts are let go as they are written. A client that takes nothing for the hold's `stallMs` is
 * cut off (the answer fails, and its connection with it): the service's idle timeout does not
 * apply while an answer is being written.
 */
export function heldBody(parts: Array<string | Uint8Array>, hold: ResultHold): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let given = 0;
  /** Where the text part being handed out has got to. */
  let offset = 0;
  const next = (): Uint8Array | undefined => {
    const part = parts[0];
    if (part === undefined) return undefined;
    if (typeof part !== 'string') return parts.shift() as Uint8Array;
    let end = Math.min(offset + PIECE_CHARS, part.length);
    // Never between the two halves of a surrogate pair, which would each encode as U+FFFD.
    const last = part.charCodeAt(end - 1);
    if (end < part.length && last >= 0xd800 && last <= 0xdbff) end--;
    const piece = encoder.encode(part.slice(offset, end));
    offset = end;
    if (offset === part.length) {
      parts.shift();
      offset = 0;
    }
    return piece;
  };
  let stalled: ReturnType<typeof setTimeout> | undefined;
  const drop = () => {
    clearTimeout(stalled);
    parts.length = 0;
    hold.release();
  };
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        // The piece handed out before this pull is in the socket now.
        hold.release(given);
        clearTimeout(stalled);
        const piece = next();
        if (piece === undefined) {
          drop();
          controller.close();
          return;
        }
        given = piece.byteLength;
        controller.enqueue(piece);
        stalled = setTimeout(() => {
          drop();
          controller.error(new Error(`the client read nothing of its answer for ${hold.stallMs} ms`));
        }, hold.stallMs);
        stalled.unref?.();
      },
      cancel: drop,
    },
    { highWaterMark: 1 },
  );
}
