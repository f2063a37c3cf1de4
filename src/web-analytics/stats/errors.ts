import { HttpProblem } from '../../http/problem';

/**
 * A request the Stats API refuses, answered as Plausible answers it: the status and
 * `{ "error": message }` with Plausible's wording. Its problem type names it where it travels as
 * a problem (logs, the error mapper), but the route answers it in Plausible's shape.
 */
export class StatsQueryError extends HttpProblem {
  static readonly TYPE = 'urn:analytics:problem:stats-api-query';

  constructor(message: string, status = 400) {
    super(status, status === 401 ? 'Unauthorized' : 'Invalid Stats API query', message, { type: StatsQueryError.TYPE });
  }
}

/** Plausible's answer to a key or site it does not accept. */
export const INVALID_KEY_OR_SITE = "Invalid API key or site ID. Please make sure you're using a valid API key with access to the site you've requested.";
/** Plausible's answer to a request without a bearer key. */
export const MISSING_KEY = 'Missing API key. Please use a valid Plausible API key as a Bearer Token.';
/** Plausible's answer to a request without `site_id`. */
export const MISSING_SITE_ID = 'Missing site ID. Please provide the required site_id parameter with your request.';

/**
 * A JSON value written as Elixir's `inspect` writes the decoded value, which Plausible's messages
 * quote: `["is", "visit:foo", ["x"]]`, `%{"case_sensitive" => false}`, `nil`.
 */
export function inspect(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(inspect).join(', ')}]`;
  if (typeof value === 'object') {
    return `%{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)} => ${inspect(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}
