/** RFC 9457 problem details: the one error shape of every route. */

export interface ProblemError {
  /** JSON Pointer into the request body, such as `/events/3/timestamp`. */
  pointer?: string;
  /** Query parameter name, for errors in the query string. */
  parameter?: string;
  detail: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ProblemError[];
}

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

export const unavailable = (detail: string, retryAfterSeconds: number, type?: string) =>
  new HttpProblem(503, 'Service Unavailable', detail, { headers: { 'retry-after': String(retryAfterSeconds) }, type });

/**
 * The type of a 503 after which the events may be stored after all (storage took the insert
 * but its answer was lost): unlike other 503s, a resend may store them twice.
 */
export const OUTCOME_UNKNOWN_TYPE = 'urn:event-analytics:problem:outcome-unknown';
