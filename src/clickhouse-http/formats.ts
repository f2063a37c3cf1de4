import { clickhouseError } from './errors';

const JSON_TYPE = 'application/json; charset=UTF-8';
const NDJSON_TYPE = 'application/x-ndjson; charset=UTF-8';
const TSV_TYPE = 'text/tab-separated-values; charset=UTF-8';
const CSV_TYPE = 'text/csv; charset=UTF-8; header=absent';
const CSV_HEADER_TYPE = 'text/csv; charset=UTF-8; header=present';
const TEXT_TYPE = 'text/plain; charset=UTF-8';
const BINARY_TYPE = 'application/octet-stream';

/**
 * The output formats the interface answers in, by ClickHouse's names, with the Content-Type
 * ClickHouse gives each. The engine writes every one of them. Formats that read files of the
 * server (Template, CustomSeparated with files, Protobuf and CapnProto schemas) are not offered.
 */
const FORMATS: Record<string, string> = {
  TabSeparated: TSV_TYPE,
  TabSeparatedRaw: TSV_TYPE,
  TabSeparatedWithNames: TSV_TYPE,
  TabSeparatedWithNamesAndTypes: TSV_TYPE,
  TabSeparatedRawWithNames: TSV_TYPE,
  TabSeparatedRawWithNamesAndTypes: TSV_TYPE,
  TSV: TSV_TYPE,
  TSVRaw: TSV_TYPE,
  TSVWithNames: TSV_TYPE,
  TSVWithNamesAndTypes: TSV_TYPE,
  CSV: CSV_TYPE,
  CSVWithNames: CSV_HEADER_TYPE,
  CSVWithNamesAndTypes: CSV_HEADER_TYPE,
  JSON: JSON_TYPE,
  JSONStrings: JSON_TYPE,
  JSONCompact: JSON_TYPE,
  JSONCompactStrings: JSON_TYPE,
  JSONColumns: JSON_TYPE,
  JSONColumnsWithMetadata: JSON_TYPE,
  JSONCompactColumns: JSON_TYPE,
  JSONObjectEachRow: JSON_TYPE,
  JSONEachRow: NDJSON_TYPE,
  JSONLines: NDJSON_TYPE,
  NDJSON: NDJSON_TYPE,
  JSONStringsEachRow: NDJSON_TYPE,
  JSONCompactEachRow: NDJSON_TYPE,
  JSONCompactEachRowWithNames: NDJSON_TYPE,
  JSONCompactEachRowWithNamesAndTypes: NDJSON_TYPE,
  JSONCompactStringsEachRow: NDJSON_TYPE,
  JSONCompactStringsEachRowWithNames: NDJSON_TYPE,
  JSONCompactStringsEachRowWithNamesAndTypes: NDJSON_TYPE,
  RowBinary: BINARY_TYPE,
  RowBinaryWithNames: BINARY_TYPE,
  RowBinaryWithNamesAndTypes: BINARY_TYPE,
  Native: BINARY_TYPE,
  Parquet: BINARY_TYPE,
  Arrow: BINARY_TYPE,
  ArrowStream: BINARY_TYPE,
  ORC: BINARY_TYPE,
  Avro: BINARY_TYPE,
  Values: TEXT_TYPE,
  Vertical: TEXT_TYPE,
  Pretty: TEXT_TYPE,
  PrettyCompact: TEXT_TYPE,
  PrettyCompactMonoBlock: TEXT_TYPE,
  PrettySpace: TEXT_TYPE,
  PrettyNoEscapes: TEXT_TYPE,
  PrettyCompactNoEscapes: TEXT_TYPE,
  Markdown: 'text/markdown; charset=UTF-8',
  XML: 'application/xml; charset=UTF-8',
  TSKV: TSV_TYPE,
  Null: TEXT_TYPE,
};

const BY_LOWER_CASE = new Map(Object.keys(FORMATS).map((name) => [name.toLowerCase(), name]));

/** ClickHouse's answer when neither the statement, `default_format` nor X-ClickHouse-Format names one. */
export const DEFAULT_FORMAT = 'TabSeparated';

/** The format's own name (ClickHouse takes them in any case), or UNKNOWN_FORMAT. */
export function outputFormat(name: string): string {
  const format = BY_LOWER_CASE.get(name.toLowerCase());
  if (format === undefined) throw clickhouseError('UNKNOWN_FORMAT', `Unknown output format ${name}: the interface answers in ${Object.keys(FORMATS).join(', ')}`);
  return format;
}

export const contentTypeOf = (format: string): string => FORMATS[format] ?? BINARY_TYPE;
