import { t } from 'elysia';
import type { StreamFormat } from '../storage/storage';
import { RETRY_AFTER_SECONDS, tooManyRequests } from './problem';

/** The formats of exports, as the API names them. */
export const EXPORT_FORMATS = ['ndjson', 'csv', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const ExportFormatSchema = t.Union(
  [t.Literal('ndjson'), t.Literal('csv'), t.Literal('parquet')],
  { error: `must be one of ${EXPORT_FORMATS.join(', ')}`, description: 'ndjson: one JSON object per line; csv: with a header line; parquet: one Parquet file.' },
);

/** What the engine writes for each format (rows keyed by column for ndjson), and what the answer says it is. */
export const EXPORT_ENCODINGS: Record<ExportFormat, { engine: StreamFormat; contentType: string }> = {
  ndjson: { engine: 'JSONEachRow', contentType: 'application/x-ndjson' },
  csv: { engine: 'CSVWithNames', contentType: 'text/csv; charset=utf-8' },
  parquet: { engine: 'Parquet', contentType: 'application/vnd.apache.parquet' },
};

/**
 * A download streamed from the engine's chunks as the client reads them (pull: memory holds a
 * chunk or so, however large the export). The first chunk is awaited before answering, so a
 * statement that fails at once is a problem answer rather than a cut-off 200; a failure later
 * cuts the download, which the client sees as incomplete (no chunked terminator) and repeats.
 */
export async function streamedDownload(chunks: AsyncIterable<Uint8Array>, format: ExportFormat, filename: string): Promise<Response> {
  const iterator = chunks[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array> | undefined = await iterator.next();
  const body = new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        const next = first ?? (await iterator.next());
        first = undefined;
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: async () => {
        await iterator.return?.();
      },
    },
    { highWaterMark: 1 },
  );
  return new Response(body, {
    headers: { 'content-type': EXPORT_ENCODINGS[format].contentType, 'content-disposition': `attachment; filename="${filename}.${format}"` },
  });
}

/**
 * Long-running work a workspace may have in flight at once (exports, imports): beyond it, 429.
 * Bounded per workspace so that one cannot take every engine session from the others.
 */
export class WorkspaceGate {
  private readonly running = new Map<string, number>();

  constructor(
    private readonly perWorkspace: number,
    private readonly what: string,
  ) {}

  /** Takes a slot of `workspace` (429 when none is free); the returned function frees it. */
  enter(workspace: string): () => void {
    const n = this.running.get(workspace) ?? 0;
    if (n >= this.perWorkspace) throw tooManyRequests(`this workspace has ${n} ${this.what} running; try again once one has finished`, RETRY_AFTER_SECONDS);
    this.running.set(workspace, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(workspace) ?? 1) - 1;
      if (left === 0) this.running.delete(workspace);
      else this.running.set(workspace, left);
    };
  }
}

/** Releases `release` once `chunks` ends, fails or is abandoned. */
export async function* releasing(chunks: AsyncIterable<Uint8Array>, release: () => void): AsyncIterable<Uint8Array> {
  try {
    yield* chunks;
  } finally {
    release();
  }
}
