/** RFC 9457 problem details: the one error shape of every route. */
import { t } from 'elysia';

const ProblemErrorSchema = t.Object({
  pointer: t.Optional(t.String({ description: 'JSON Pointer into the request body, such as `/events/3/timestamp`.' })),
  parameter: t.Optional(t.String({ description: 'Query parameter name, for errors in the query string.' })),
  detail: t.String(),
});
export type ProblemError = typeof ProblemErrorSchema.static;

export const Problem = t.Object(
  {
    type: t.String({ description: '`about:blank`, or a URN naming a special case.' }),
    title: t.String(),
    status: t.Integer(),
    detail: t.String(),
    errors: t.Optional(t.Array(ProblemErrorSchema)),
  },
  {
    description: 'application/problem+json (RFC 9457)',
    examples: [
      {
        type: 'about:blank',
        title: 'Invalid input',
        status: 400,
        detail: '1 invalid field in the request body',
        errors: [{ pointer: '/events/0/type', detail: 'must be one of page, track, identify, group' }],
      },
    ],
  },
);
export type ProblemBody = typeof Problem.static;

/** What each error status means, for the OpenAPI document. */
const PROBLEM_MEANINGS: Record<number, string> = {
  400: 'Invalid input: malformed JSON, a field that breaks the schema (every one listed), invalid SQL.',
  401: 'No key, a malformed Authorization header, or an unknown key.',
  403: 'The key lacks the scope of the route, or the SQL is not allowed.',
  404: 'No such workspace or webhook.',
  408: 'The body did not arrive within REQUEST_BODY_TIMEOUT_MS.',
  409: 'The name or database is taken.',
  413: 'The body, or an event in it, is over the limit.',
  415: 'The body is not application/json.',
  429: 'Shedding load: retry after Retry-After seconds.',
  503: 'Shedding load, shutting down, or storage unavailable: retry after Retry-After seconds.',
};

/** The problem answers a route may give, by status, for its `response` (the OpenAPI document). */
export function problems(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, { ...Problem, description: PROBLEM_MEANINGS[status] }])) as Record<number, typeof Problem>;
}

/** Problems of any route that reads a JSON body: its reading, and storage. */
export const BODY_PROBLEMS = [400, 408, 413, 415, 503] as const;

/** An error that is an HTTP answer: thrown anywhere, turned into problem+json by the error mapper. */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly extra: { errors?: ProblemError[]; headers?: Record<string, string>; type?: string } = {},
  ) {
    super(detail);
  }

  toBody(): ProblemBody {
    return {
      type: this.extra.type ?? 'about:blank',
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(this.extra.errors ? { errors: this.extra.errors } : {}),
    };
  }

  toResponse(): Response {
    return new Response(JSON.stringify(this.toBody()), {
      status: this.status,
      headers: { 'content-type': 'application/problem+json', ...this.extra.headers },
    });
  }
}

/**
 * An error of a feature that knows the answer it stands for: the error mapper asks it, so that
 * it need not know every feature's errors.
 */
export interface AnswersAsProblem {
  toProblem(): HttpProblem;
}

export function answersAsProblem(error: unknown): error is AnswersAsProblem {
  return error instanceof Error && typeof (error as Partial<AnswersAsProblem>).toProblem === 'function';
}

export const invalidInput = (detail: string, errors: ProblemError[]) =>
  new HttpProblem(400, 'Invalid input', detail, { errors });

export const unauthorized = (detail: string, error: 'invalid_request' | 'invalid_token') =>
  new HttpProblem(401, 'Unauthorized', detail, { headers: { 'www-authenticate': `Bearer error="${error}"` } });

export const forbidden = (detail: string, errors?: ProblemError[]) =>
  new HttpProblem(403, 'Forbidden', detail, errors ? { errors } : {});

export const notFound = (detail: string) => new HttpProblem(404, 'Not Found', detail);

export const conflict = (detail: string) => new HttpProblem(409, 'Conflict', detail);

export const payloadTooLarge = (detail: string, errors?: ProblemError[]) =>
  new HttpProblem(413, 'Payload Too Large', detail, errors ? { errors } : {});

/** Seconds a shed client should wait before trying again. */
export const RETRY_AFTER_SECONDS = 1;

export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new HttpProblem(429, 'Too Many Requests', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });

export const unavailable = (detail: string, retryAfterSeconds: number) =>
  new HttpProblem(503, 'Service Unavailable', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });
