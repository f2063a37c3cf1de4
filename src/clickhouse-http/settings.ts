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
 * - settings that only shape the output (`output_format_*`, `date_time_output_format`, CSV and
 *   TSV options) are honoured; a value the engine does not take is the statement's error (400);
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

/** Output settings that read or write files of the server: never honoured. */
const FILE_SETTINGS = new Set(['output_format_schema', 'format_schema', 'format_template_resultset', 'format_template_row', 'format_template_rows_between_delimiter']);
const OUTPUT_SETTING = /^(?:output_format_[a-z0-9_]+|format_(?:csv|tsv|custom)_[a-z0-9_]+|date_time_output_format|interval_output_format|bool_true_representation|bool_false_representation)$/;
/** A value an output setting may take: short, printable, nothing that could read as another argument. */
const OUTPUT_VALUE = /^[\x20-\x7e]{0,64}$/;
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
    } else if (OUTPUT_SETTING.test(name) && !FILE_SETTINGS.has(name) && OUTPUT_VALUE.test(value)) {
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
