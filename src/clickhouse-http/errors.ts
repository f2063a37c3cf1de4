import { HttpProblem, type AnswersAsProblem } from '../http/problem';
import { pathOf } from '../http/url-path';
import { engineMessage } from '../queries/query-runner';
import { SqlRefusal, SqlUnsupported } from '../queries/sql-guard';
import { StorageQueryError } from '../storage/storage';
import { CLICKHOUSE_PATH } from './model';

/** ClickHouse's error codes this interface answers with itself (ClickHouse's src/Common/ErrorCodes.cpp). */
export const CODES = {
  UNSUPPORTED_METHOD: 1,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27,
  BAD_ARGUMENTS: 36,
  NOT_IMPLEMENTED: 48,
  UNKNOWN_TABLE: 60,
  SYNTAX_ERROR: 62,
  UNKNOWN_FORMAT: 73,
  UNKNOWN_DATABASE: 81,
  READONLY: 164,
  TOO_MANY_SIMULTANEOUS_QUERIES: 202,
  SOCKET_TIMEOUT: 209,
  QUERY_IS_TOO_LARGE: 229,
  ACCESS_DENIED: 497,
  AUTHENTICATION_FAILED: 516,
  UNKNOWN_EXCEPTION: 1002,
} as const;
export type CodeName = keyof typeof CODES;

/**
 * The HTTP status of an error code, as ClickHouse's exceptionCodeToHTTPStatus gives it, except
 * that a failed authentication is 401 (the service counts 401s against the address that sent
 * them) and that codes ClickHouse answers with 500 although the statement is at fault (READONLY,
 * a result over its limits, a type error) get 403 or 400 here: a 500 means a fault of the service.
 */
const STATUSES: ReadonlyArray<[number, readonly number[]]> = [
  [401, [192, 193, 194, 516]],
  [403, [164, 195, 291, 497]],
  [404, [46, 47, 50, 56, 60, 63, 73, 78, 81, 115, 152, 336, 511]],
  [408, [159, 209]],
  [411, [381]],
  [413, [229]],
  [429, [202]],
  [501, [48]],
  [503, [210]],
  [500, [1002]],
];
const STATUS_OF_CODE = new Map(STATUSES.flatMap(([status, codes]) => codes.map((code) => [code, status] as const)));

/** The status of an error of the engine or of this interface; any other failing statement is the client's 400. */
export const statusOf = (code: number): number => STATUS_OF_CODE.get(code) ?? 400;

/** An error told as ClickHouse tells it: `Code: N. DB::Exception: message. (NAME)`, with the code in a header. */
export class ClickHouseError extends Error implements AnswersAsProblem {
  override readonly name = 'ClickHouseError';
  constructor(
    readonly code: number,
    /** The whole text, as ClickHouse writes it. */
    readonly text: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(text);
  }

  get status(): number {
    return statusOf(this.code);
  }

  /** For the error mapper of the rest of the service, which logs nothing for it. */
  toProblem(): HttpProblem {
    return new HttpProblem(this.status, 'ClickHouse error', this.text);
  }

  toResponse(): Response {
    return new Response(`${this.text}\n`, {
      status: this.status,
      headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-clickhouse-exception-code': String(this.code), ...this.headers },
    });
  }
}

/** An error of this interface, by ClickHouse's name for it. */
export function clickhouseError(name: CodeName, message: string, headers?: Record<string, string>): ClickHouseError {
  return new ClickHouseError(CODES[name], `Code: ${CODES[name]}. DB::Exception: ${message.replace(/\.$/, '')}. (${name})`, headers);
}

/** ACCESS_DENIED for a name outside the workspace, in the SQL guard's words, whether or not it exists. */
export const outside = (name: string) =>
  clickhouseError('ACCESS_DENIED', `${name} is outside this workspace: statements may read only the tables of the workspace's own database (such as events)`);

/** The code of a problem answered before the statement ran (a key, a limit, the body), by its status. */
const CODE_OF_STATUS: Record<number, CodeName> = {
  401: 'AUTHENTICATION_FAILED',
  403: 'ACCESS_DENIED',
  405: 'UNSUPPORTED_METHOD',
  408: 'SOCKET_TIMEOUT',
  413: 'QUERY_IS_TOO_LARGE',
  429: 'TOO_MANY_SIMULTANEOUS_QUERIES',
  501: 'NOT_IMPLEMENTED',
  503: 'TOO_MANY_SIMULTANEOUS_QUERIES',
};

/** Headers of a problem a client still needs in ClickHouse's form: when to try again. */
const KEPT_HEADERS = ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'allow'];

/**
 * The statement's failure in ClickHouse's words: the guard's refusal (ACCESS_DENIED, or
 * NOT_IMPLEMENTED for syntax it does not run), the engine's own error, tidied as POST /queries
 * tidies it. Anything else is thrown on as it is.
 */
export function asClickHouseError(err: unknown): unknown {
  if (err instanceof SqlRefusal) return clickhouseError('ACCESS_DENIED', err.message);
  if (err instanceof SqlUnsupported) return clickhouseError('NOT_IMPLEMENTED', err.message);
  if (err instanceof StorageQueryError && err.clickhouseCode !== undefined) {
    const message = engineMessage(err);
    return new ClickHouseError(err.clickhouseCode, message.startsWith('Code: ') ? message : `Code: ${err.clickhouseCode}. DB::Exception: ${message}`);
  }
  return err;
}

/**
 * The answer to a request under the interface's path that failed (for the service's error
 * mapper): the error itself when it is ClickHouse's, else the problem made of it (a key refused,
 * a limit, the body), in ClickHouse's form. Undefined for any other path.
 */
export function clickhouseErrorAnswer(request: Request, error: unknown, problem: HttpProblem): Response | undefined {
  const path = pathOf(request.url);
  if (path !== CLICKHOUSE_PATH && !path.startsWith(`${CLICKHOUSE_PATH}/`)) return undefined;
  if (error instanceof ClickHouseError) return error.toResponse();
  const headers = Object.fromEntries(KEPT_HEADERS.flatMap((name) => (problem.extra.headers?.[name] ? [[name, problem.extra.headers[name]!]] : [])));
  const name = CODE_OF_STATUS[problem.status] ?? (problem.status >= 500 ? 'UNKNOWN_EXCEPTION' : 'BAD_ARGUMENTS');
  const answer = clickhouseError(name, problem.detail, headers).toResponse();
  // The status stays the service's own (a 404 for an unknown path, a 503 when shedding load).
  return new Response(answer.body, { status: problem.status, headers: answer.headers });
}
