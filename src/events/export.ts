import { t } from 'elysia';
import { EXPORT_ENCODINGS, ExportFormatSchema } from '../http/streamed-export';
import { invalidInput } from '../http/problem';
import { asWritten, type PrepareStatement } from '../properties/fast-reads';
import { identifier, type Storage } from '../storage/storage';
import { EVENT_COLUMNS, EVENT_JSON_SQL } from './event-rows';
import { whereClause } from './list-events';
import { ListEventsQuery } from './model';

/** Parameters of a listing that an export has no use for: it is not paginated, and comes in table order. */
const PAGING = ['limit', 'offset', 'orderByField', 'orderByDirection'] as const;

const { limit: _l, offset: _o, orderByField: _f, orderByDirection: _d, ...FILTERS } = ListEventsQuery.properties;

/** `GET /events/export` parameters: the filters of `GET /events` and the format. */
export const ExportEventsQuery = t.Object({ ...FILTERS, format: ExportFormatSchema }, { additionalProperties: true });
export type ExportEventsQuery = typeof ExportEventsQuery.static;

/**
 * The events that match, in the order of the table's sorting key (timestamp, then uuid), so the
 * engine streams them without sorting the whole result, and a cut export can go on from the
 * last timestamp it got. ndjson lines are the events of `GET /events`; csv and parquet have one
 * column per event field (objects as JSON text). `prepare` may have its property filters read
 * stored columns (src/properties/fast-reads.ts).
 */
export function exportEvents(storage: Storage, database: string, query: ExportEventsQuery, prepare: PrepareStatement = asWritten): AsyncIterable<Uint8Array> {
  const { format, ...filters } = query;
  const paging = PAGING.filter((p) => (filters as Record<string, unknown>)[p] !== undefined);
  if (paging.length > 0) {
    throw invalidInput(
      'an export is not paginated: it holds every matching event, oldest first',
      paging.map((parameter) => ({ parameter, detail: 'is not a parameter of exports; narrow it with startDate and endDate instead' })),
    );
  }
  const { where, params } = whereClause(filters as Record<string, string | undefined>);
  const from = `FROM ${identifier(database)}.events ${where} ORDER BY timestamp, uuid`;
  const [select, engineFormat] = format === 'ndjson' ? [`SELECT ${EVENT_JSON_SQL} AS json`, 'TabSeparatedRaw'] : [`SELECT ${EVENT_COLUMNS.join(', ')}`, EXPORT_ENCODINGS[format].engine];
  return (async function* () {
    yield* storage.stream(await prepare(`${select} ${from}`, params), params, engineFormat);
  })();
}
