import { TypeCompiler } from '@sinclair/typebox/compiler';
import { t } from 'elysia';
import { decodeBody, RawBody } from '../http/json-body';
import { HttpProblem } from '../http/problem';
import type { MonotonicClock } from '../monotonic-clock';
import type { Micros } from '../timestamps';
import { lacksEventName, toStoredInput, TRACK_NEEDS_EVENT } from './event-input';
import { acceptEvent, type AcceptedEvent } from './event-rows';
import { IngestOverloadedError, type IngestBuffer } from './ingest-buffer';
import { EventDTO } from './model';
import { TimeSlices } from './time-slices';

/** Lines validated and submitted together: large inserts, a bounded amount in memory. */
const IMPORT_BATCH_LINES = 10_000;
/** Batches submitted and not yet committed, at most: the next one is read and checked meanwhile. */
const BATCHES_IN_FLIGHT = 2;
/** Line errors listed in the summary, at most; `errorCount` counts them all. */
const MAX_LISTED_ERRORS = 1000;
/** How long an import waits when the ingest queue is full before submitting again. */
const OVERLOAD_WAIT_MS = 200;
/**
 * The longest an import reads and checks lines before it lets other requests run: a body arrives
 * (and inflates) faster than it is checked, so reading alone would never give the event loop back.
 */
const SLICE_MS = 5;
/** Decoded and split at once, at most: a chunk inflated whole (DecompressionStream under Deno) is taken a piece at a time. */
const PIECE_BYTES = 64 * 1024;

const checkEvent = TypeCompiler.Compile(EventDTO);

export const ImportLineError = t.Object({ line: t.Integer({ description: 'Line number, from 1.' }), detail: t.String() });
export const ImportSummary = t.Object({
  stored: t.Integer({ description: 'Events stored.' }),
  duplicates: t.Integer({ description: 'Lines whose messageId was stored already (by an earlier import or send): acknowledged, not stored again.' }),
  suppressed: t.Integer({ description: 'Lines of suppressed subjects (regulations): not stored.' }),
  heldBack: t.Integer({ description: "Lines that broke the workspace's tracking plan where it drops or quarantines them: not stored (quarantined ones are listed by GET /quarantine)." }),
  errorCount: t.Integer({ description: 'Lines refused; the first 1,000 are listed in errors.' }),
  errors: t.Array(ImportLineError),
});
export type ImportSummary = typeof ImportSummary.static;

export interface ImportDeps {
  buffer: IngestBuffer;
  clock: MonotonicClock;
  maxEventBytes: number;
  /**
   * Told, once a batch is loaded, of its first event's arrival time: a batch's events take their
   * time as they are read, so events stored after them may have arrived later (stored visits are
   * built by arrival: they look back to it).
   */
  loadedSince?: (database: string, parsedAt: Micros) => void;
}

/** A line of the body: its number (from 1), and its text unless it is over the size limit. */
interface Line {
  line: number;
  text?: string;
  /** Its length in characters, for the message of one over the limit. */
  length: number;
}

/**
 * The lines of a byte stream, a chunk's worth at a time (not one promise per line: imports are
 * millions of lines). A line over `maxLength` characters comes as its length only, never held
 * whole.
 */
async function* lines(body: ReadableStream<Uint8Array>, maxLength: number): AsyncIterable<Line[]> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let line = 0;
  let partial = '';
  let skipping = 0;
  const flush = (text: string, out: Line[]) => {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      line++;
      out.push(skipping > 0 ? { line, length: skipping + piece.length } : { line, text: partial + piece, length: partial.length + piece.length });
      partial = '';
      skipping = 0;
    }
    const rest = text.slice(start);
    if (skipping > 0 || partial.length + rest.length > maxLength) {
      skipping += partial.length + rest.length;
      partial = '';
    } else partial += rest;
  };
  for await (const chunk of body) {
    for (let at = 0; at < chunk.byteLength; at += PIECE_BYTES) {
      const out: Line[] = [];
      flush(decoder.decode(chunk.subarray(at, at + PIECE_BYTES), { stream: true }), out);
      if (out.length > 0) yield out;
    }
  }
  const out: Line[] = [];
  flush(decoder.decode() + '\n', out);
  // The text ends with a line break, or not: the last line is the same either way.
  if (out.length > 0 && out.at(-1)!.text === '') out.pop();
  if (out.length > 0) yield out;
}

/** Why a line is not an event, or its event. */
function readLine(text: string): { event: EventDTO } | { detail: string } {
  let value: unknown;
  try {
    value = decodeBody(new RawBody('application/json', text));
  } catch (err) {
    if (err instanceof HttpProblem) return { detail: err.detail };
    throw err;
  }
  if (checkEvent.Check(value)) return lacksEventName(value) ? { detail: `/event ${TRACK_NEEDS_EVENT}` } : { event: value };
  const first = checkEvent.Errors(value).First()!;
  const message = (first.schema as { error?: unknown }).error;
  return { detail: `${first.path || '/'} ${typeof message === 'string' ? message : first.message}` };
}

/**
 * Stores NDJSON events (the objects of `POST /events`, one a line) as they stream in: each line
 * is read, validated and accepted on its own, with its own `timestamp` kept; good lines go to
 * the ingest buffer in batches of IMPORT_BATCH_LINES (so messageId de-duplication, suppression
 * and webhooks apply as for `POST /events`), bad ones are reported with their numbers. Memory
 * holds a couple of batches whatever the size of the upload, and reading waits while they are
 * being inserted. It runs in slices of SLICE_MS, so other requests are served meanwhile.
 */
export async function importEvents(deps: ImportDeps, database: string, body: ReadableStream<Uint8Array>): Promise<ImportSummary> {
  const summary: ImportSummary = { stored: 0, duplicates: 0, suppressed: 0, heldBack: 0, errorCount: 0, errors: [] };
  const fail = (line: number, detail: string) => {
    summary.errorCount++;
    if (summary.errors.length < MAX_LISTED_ERRORS) summary.errors.push({ line, detail });
  };
  const inFlight = new Set<Promise<void>>();
  // A batch storage did not take ends the import (503): the client sends the file again, and
  // the lines with a messageId that were stored are not stored twice.
  let failure: unknown;
  const submit = (batch: AcceptedEvent[]) => {
    const done = submitBatch(deps.buffer, database, batch).then(
      ({ stored, suppressed, heldBack }) => {
        if (stored > 0 && deps.loadedSince) {
          const since = batch[0]!.parsedAt;
          deps.buffer.loaded(database).then(() => deps.loadedSince!(database, since), () => {});
        }
        summary.stored += stored;
        summary.suppressed += suppressed;
        summary.heldBack += heldBack;
        summary.duplicates += batch.length - stored - suppressed - heldBack;
      },
      (err) => void (failure ??= err),
    );
    inFlight.add(done);
    done.finally(() => inFlight.delete(done));
  };
  // A batch larger than the ingest queue would never be taken: the import would wait forever.
  const batchLines = Math.min(IMPORT_BATCH_LINES, deps.buffer.capacity);
  let batch: AcceptedEvent[] = [];
  let lastLine = 0;
  const slices = new TimeSlices(SLICE_MS);
  try {
    for await (const chunk of lines(body, deps.maxEventBytes)) {
      for (const { line, text, length } of chunk) {
        if (slices.due()) await slices.pause();
        lastLine = line;
        if (text === undefined || Buffer.byteLength(text) > deps.maxEventBytes) {
          fail(line, `is over ${deps.maxEventBytes} bytes, the limit of an event (${length} characters)`);
          continue;
        }
        if (text.trim() === '') continue;
        const read = readLine(text);
        if ('detail' in read) {
          fail(line, read.detail);
          continue;
        }
        batch.push(acceptEvent(toStoredInput(read.event), deps.clock.next(), database));
        if (batch.length < batchLines) continue;
        submit(batch);
        batch = [];
      }
      if (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
      if (failure) break;
    }
  } catch (err) {
    // The body broke off or is not what it claims (bad gzip): what came before is kept and reported.
    if (err instanceof HttpProblem) throw err;
    fail(lastLine + 1, `the body could not be read from here on: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (batch.length > 0 && !failure) submit(batch);
  await Promise.all(inFlight);
  if (failure) throw failure;
  return summary;
}

/** Submits one batch, waiting while the ingest queue is full rather than failing the import. */
async function submitBatch(buffer: IngestBuffer, database: string, batch: AcceptedEvent[]): Promise<{ stored: number; suppressed: number; heldBack: number }> {
  for (;;) {
    try {
      return await buffer.submit(database, batch, 'import');
    } catch (err) {
      if (!(err instanceof IngestOverloadedError)) throw err;
      await new Promise((wake) => setTimeout(wake, OVERLOAD_WAIT_MS));
    }
  }
}
