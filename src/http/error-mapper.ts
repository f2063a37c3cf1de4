import { Elysia, ValidationError } from 'elysia';
import { ActorStoppedError, MailboxFullError } from '../actors/actor';
import type { Logger } from '../log';
import { StorageUnavailableError } from '../storage/storage';
import { answersAsProblem, HttpProblem, invalidInput, RETRY_AFTER_SECONDS, unavailable, type ProblemError } from './problem';
import { pathOf } from './url-path';

interface SchemaIssue {
  path: string;
  message: string;
  schema?: { error?: unknown };
}


/** TypeBox's messages about presence, in the wording of our other errors. */
const PLAIN_WORDING: Record<string, string> = {
  'Expected required property': 'is required',
  'Unexpected property': 'is not a known field',
  'Expected object': 'must be a JSON object',
};

/** Most entries listed in one 400. */
const MAX_ERRORS = 64;

/**
 * TypeBox's own issues, not Elysia's `error.all`: that one writes each failing value into a
 * summary, which throws for a number kept exactly (a JSON.rawJSON object has no string form).
 */
function schemaIssues(error: ValidationError): Iterable<SchemaIssue> {
  const validator = error.validator as { Errors?: (value: unknown) => Iterable<SchemaIssue> } | undefined;
  return validator?.Errors ? validator.Errors(error.value) : (error.all as SchemaIssue[]);
}

/** One entry per failing field, with the schema's own wording when it has one. */
function validationErrors(error: ValidationError): ProblemError[] {
  const seen = new Set<string>();
  const out: ProblemError[] = [];
  const inQuery = error.type === 'query';
  for (const issue of schemaIssues(error)) {
    if (seen.has(issue.path)) continue;
    seen.add(issue.path);
    const detail = PLAIN_WORDING[issue.message] ?? (typeof issue.schema?.error === 'string' ? issue.schema.error : issue.message);
    out.push(inQuery ? { parameter: issue.path.replace(/^\//, ''), detail } : { pointer: issue.path, detail });
    if (out.length === MAX_ERRORS) break;
  }
  return out;
}

function toProblem(code: string | number, error: unknown, log: Logger, request: Request, unrouted: (request: Request) => HttpProblem): HttpProblem {
  if (error instanceof HttpProblem) return error;
  // Elysia wraps what a parse hook throws (our body reader's 400, 408, 413) in its ParseError.
  if (code === 'PARSE' && (error as Error).cause instanceof HttpProblem) return (error as Error).cause as HttpProblem;
  if (error instanceof ValidationError) {
    const errors = validationErrors(error);
    const where = error.type === 'query' ? 'query parameters' : 'request body';
    return invalidInput(`${errors.length} invalid field${errors.length === 1 ? '' : 's'} in the ${where}`, errors);
  }
  if (code === 'NOT_FOUND') return unrouted(request);
  if (code === 'PARSE') return invalidInput('the body could not be read', []);
  return problemOf(error, log, { method: request.method, path: pathOf(request.url) });
}

/**
 * The problem an error thrown while doing the work stands for; an unexpected one is logged with
 * `where` and is a 500. Also for answers made of several parts that fail alone (a dashboard's tiles).
 */
export function problemOf(error: unknown, log: Logger, where: Record<string, unknown>): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (answersAsProblem(error)) return error.toProblem();
  if (error instanceof MailboxFullError) return unavailable('too many requests are waiting; try again shortly', RETRY_AFTER_SECONDS);
  if (error instanceof ActorStoppedError) return unavailable('the service is shutting down', RETRY_AFTER_SECONDS);
  if (error instanceof StorageUnavailableError) {
    log.warn('storage unavailable', { err: error });
    return unavailable('storage is unavailable; try again shortly', RETRY_AFTER_SECONDS);
  }
  log.error('unhandled error', { ...where, err: error });
  return new HttpProblem(500, 'Internal Server Error', 'the server failed to handle the request; it has been logged');
}

/**
 * The answer for a request of a feature that speaks a protocol of its own (ClickHouse's), given
 * the error and the problem made of it; undefined for problem+json.
 */
export type ErrorAnswer = (request: Request, error: unknown, problem: HttpProblem) => Response | undefined;

/**
 * The one place where errors become responses: problem+json, never a stack trace or HTML.
 * `unrouted` answers a request no route takes (404, 405 or 501: src/http/methods.ts); `answerOf`
 * may tell the same problem in another protocol's form.
 */
export function errorMapper(log: Logger, unrouted: (request: Request) => HttpProblem, answerOf?: ErrorAnswer) {
  return new Elysia({ name: 'error-mapper' }).onError({ as: 'global' }, ({ code, error, request, set }) => {
    const problem = toProblem(code, error, log, request, unrouted);
    set.status = problem.status;
    return answerOf?.(request, error, problem) ?? problem.toResponse();
  });
}
