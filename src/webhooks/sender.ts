import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Event } from '../events/model';
import { EgressBlockedError, hostOf, type EgressPolicy } from '../net/egress-policy';
import { payloadBody, signedHeaders } from './payload';
import { isRetryableStatus, parseRetryAfter, type AttemptOutcome } from './retry-policy';

export interface SendTarget {
  url: string;
  secret: string;
  flatten: boolean;
}

/** The short error classes a delivery records: what the caller may see of a receiver. */
const BLOCKED_ADDRESS = 'blocked address';
export const TIMEOUT = 'timeout';

/** Network errors by code, in the few words a delivery records (node:net, node:tls and getaddrinfo codes). */
const ERROR_CLASSES: Array<[RegExp, string]> = [
  [/^ECONNREFUSED$/, 'connection refused'],
  [/^(?:ECONNRESET|EPIPE|ECONNABORTED)$/, 'connection reset'],
  [/^(?:ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL)$/, 'name not resolved'],
  [/^(?:EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL)$/, 'unreachable'],
  [/^(?:ETIMEDOUT|ESOCKETTIMEDOUT)$/, TIMEOUT],
  [/SSL|TLS|CERT|SELF_SIGNED|UNABLE_TO_/, 'tls error'],
];

/** A failed connection's class; the details go to the log only. */
function errorClass(err: unknown): string {
  if (err instanceof EgressBlockedError) return BLOCKED_ADDRESS;
  const code = String((err as { code?: unknown }).code ?? '');
  return ERROR_CLASSES.find(([pattern]) => pattern.test(code))?.[1] ?? 'connection failed';
}

/**
 * POSTs `body` and answers the status and headers; the answer's body is never read (only its
 * status matters, and what a receiver says must not come back to the caller), so the
 * connection is closed at once. Connections go through the egress policy's `lookup`.
 */
function post(url: URL, headers: Record<string, string>, body: string, egress: EgressPolicy, signal: AbortSignal): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      {
        host: hostOf(url),
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: egress.lookup,
        signal,
      },
      (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
        res.destroy();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One attempt: POST the events, signed, and classify the answer. A 2xx is success; redirects
 * are not followed (a 3xx fails, as the Standard Webhooks specification advises). An address the
 * egress policy refuses fails for good, with nothing sent. `signal` ends the attempt early when
 * the webhook stops. `log` hears the details the outcome leaves out.
 */
export async function sendOnce(
  target: SendTarget,
  id: string,
  events: readonly Event[],
  timeoutMs: number,
  signal: AbortSignal,
  egress: EgressPolicy,
  log: (details: string) => void,
): Promise<AttemptOutcome> {
  const url = new URL(target.url);
  const refused = egress.hostRefusal(hostOf(url));
  if (refused) {
    log(`blocked address: ${refused}`);
    return { ok: false, retryable: false, statusCode: 0, error: BLOCKED_ADDRESS };
  }
  const body = payloadBody(events, target.flatten);
  const headers = signedHeaders(target.secret, id, body, Math.floor(Date.now() / 1000));
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: { status: number; headers: IncomingHttpHeaders };
  try {
    res = await post(url, headers, body, egress, AbortSignal.any([signal, timeout]));
  } catch (err) {
    log((err as Error).message);
    if (timeout.aborted) return { ok: false, retryable: true, statusCode: 0, error: TIMEOUT };
    const error = errorClass(err);
    return { ok: false, retryable: error !== BLOCKED_ADDRESS, statusCode: 0, error };
  }
  if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status };
  const retryAfter = res.headers['retry-after'];
  return {
    ok: false,
    retryable: isRetryableStatus(res.status),
    statusCode: res.status,
    error: `status ${res.status}`,
    retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null, Date.now()),
  };
}
