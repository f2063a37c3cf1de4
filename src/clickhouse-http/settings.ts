import { sandboxSettings, type SandboxLimits } from '../storage/storage';
import { clickhouseError } from './errors';

/**
 * What becomes of the settings a client sends (URL parameters that are not part of the protocol).
 * A statement always runs with the sandbox's settings, readonly last, so that no setting can widen
 * what it reaches:
 * - settings that would widen access (readonly other than 1, allow_ddl, introspection functions)
 *   are refused, as a readonly ClickHouse user refuses them (READONLY);
 * - a limit the client lowers is honoured; one it raises (or lifts with 0) keeps the sandbox's; one
 *   whose value is no number is refused, as ClickHouse refuses it (CANNOT_PARSE_INPUT_ASSERTION_FAILED);
 * - the output settings listed below, which only shape how the answer is written (JSON quoting,
 *   date and CSV/TSV forms, Pretty tables, Arrow and Parquet strings), are honoured with values of
 *   their kind within bounds; a value out of them, or one the engine does not take, is the
 *   statement's error (400). Settings that name files or schemas (`format_schema`,
 *   `format_template_*`, `output_format_schema`) are not on the list, nor is any setting a later
 *   engine adds until it is reviewed;
 * - any other (`wait_end_of_query`, `send_progress_in_http_headers`, a query's own tuning...) is
 *   ignored: the answer is the same without it.
 */

/** Settings that would let a statement do more than read; a readonly user may not change them. */
const WIDENING: Record<string, (value: string) => boolean> = {
  readonly: (value) => value !== '1',
  allow_ddl: (value) => value !== '0',
  allow_introspection_functions: (value) => value !== '0',
};

/** The sandbox's limits a client may lower, by the limit they come from. */
const LIMITS: Record<string, keyof SandboxLimits> = {
  max_execution_time: 'timeoutMs',
  max_result_rows: 'maxResultRows',
  max_result_bytes: 'maxResultBytes',
  max_memory_usage: 'maxMemoryBytes',
};

/** How an output setting's value is written: a switch, a small whole number, or short printable text. */
type OutputValue = 'switch' | 'count' | 'text';
const OUTPUT_VALUES: Record<OutputValue, { pattern: RegExp; what: string }> = {
  switch: { pattern: /^(?:0|1|true|false)$/i, what: '0, 1, true or false' },
  count: { pattern: /^\d{1,7}$/, what: 'a whole number below 10,000,000' },
  // Short and printable: nothing that could read as another argument.
  text: { pattern: /^[\x20-\x7e]{0,64}$/, what: 'at most 64 printable ASCII characters' },
};

/** The output settings a client may set (reviewed one by one; ClickHouse names and kinds). */
const OUTPUT_SETTINGS: Record<string, OutputValue> = {
  output_format_json_quote_64bit_integers: 'switch',
  output_format_json_quote_64bit_floats: 'switch',
  output_format_json_quote_decimals: 'switch',
  output_format_json_quote_denormals: 'switch',
  output_format_json_escape_forward_slashes: 'switch',
  output_format_json_named_tuples_as_objects: 'switch',
  output_format_json_array_of_rows: 'switch',
  output_format_json_validate_utf8: 'switch',
  output_format_json_map_as_array_of_tuples: 'switch',
  output_format_json_skip_null_value_in_named_tuples: 'switch',
  output_format_json_pretty_print: 'switch',
  output_format_write_statistics: 'switch',
  output_format_decimal_trailing_zeros: 'switch',
  output_format_always_write_decimal_point_in_float_and_decimal: 'switch',
  output_format_csv_crlf_end_of_line: 'switch',
  output_format_tsv_crlf_end_of_line: 'switch',
  output_format_arrow_string_as_string: 'switch',
  output_format_arrow_low_cardinality_as_dictionary: 'switch',
  output_format_parquet_string_as_string: 'switch',
  output_format_pretty_row_numbers: 'switch',
  output_format_pretty_max_rows: 'count',
  output_format_pretty_max_value_width: 'count',
  output_format_pretty_max_column_pad_width: 'count',
  output_format_pretty_color: 'text',
  output_format_pretty_grid_charset: 'text',
  date_time_output_format: 'text',
  interval_output_format: 'text',
  format_csv_delimiter: 'text',
  format_csv_null_representation: 'text',
  format_tsv_null_representation: 'text',
  bool_true_representation: 'text',
  bool_false_representation: 'text',
};
const WHOLE_NUMBER = /^\d{1,20}$/;
/** Seconds, as ClickHouse takes `max_execution_time`: a fraction too. */
const SECONDS = /^\d{1,20}(?:\.\d{1,9})?$/;

export interface StatementSettings {
  /** The ClickHouse settings the statement runs with, readonly last. */
  settings: Record<string, string>;
  /** The result bytes read at most (the sandbox's, or less when the client asked). */
  maxResultBytes: number;
}

/** The settings a statement runs with, given those the client sent. */
export function statementSettings(client: ReadonlyMap<string, string>, limits: SandboxLimits): StatementSettings {
  const lowered = { ...limits };
  const output: Record<string, string> = {};
  for (const [name, value] of client) {
    if (WIDENING[name]?.(value)) throw clickhouseError('READONLY', `Cannot modify '${name}' setting in readonly mode`);
    const limit = LIMITS[name];
    if (limit) {
      if (!(limit === 'timeoutMs' ? SECONDS : WHOLE_NUMBER).test(value)) {
        throw clickhouseError('CANNOT_PARSE_INPUT_ASSERTION_FAILED', `Cannot parse the value of setting '${name}': ${JSON.stringify(value)} is not ${limit === 'timeoutMs' ? 'a number of seconds' : 'a whole number'}`);
      }
      const asked = limit === 'timeoutMs' ? Number(value) * 1000 : Number(value);
      if (asked > 0) lowered[limit] = Math.min(lowered[limit], asked);
    } else if (Object.hasOwn(OUTPUT_SETTINGS, name)) {
      const { pattern, what } = OUTPUT_VALUES[OUTPUT_SETTINGS[name]!];
      if (!pattern.test(value)) throw clickhouseError('BAD_ARGUMENTS', `Cannot set '${name}' to ${JSON.stringify(value.slice(0, 64))}: it takes ${what}`);
      output[name] = value;
    }
  }
  // ClickHouse's own default for JSON formats: 64-bit integers quoted, which clients expect (the
  // sandbox sets it otherwise for POST /queries's JSON).
  const { output_format_json_quote_64bit_integers: _unquoted, readonly, ...sandbox } = sandboxSettings(lowered, 'run');
  return {
    settings: { output_format_json_quote_64bit_integers: '1', ...output, ...sandbox, readonly: readonly! },
    maxResultBytes: lowered.maxResultBytes,
  };
}
