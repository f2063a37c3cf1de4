import type { Event } from '../events/model';
import { payloadBody, signedHeaders } from './payload';
import { isRetryableStatus, parseRetryAfter, type AttemptOutcome } from './retry-policy';

/** How much of a failing receiver's answer is kept as the delivery's last error. */
const ERROR_BODY_CHARS = 300;

export interface SendTarget {
  url: string;
  secret: string;
  flatten: boolean;
}

/** The first characters of a response body, without reading all of a large one. */
async function bodyPrefix(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  let text = '';
  const decoder = new TextDecoder();
  try {
    while (text.length < ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text.slice(0, ERROR_BODY_CHARS).trim();
}

/**
 * One attempt: POST the events, signed, and classify the answer. A 2xx is success; redirects
 * are not followed (a 3xx fails, as the Standard Webhooks specification advises). `signal`
 * ends the attempt early when the webhook stops.
 */
export async function sendOnce(target: SendTarget, id: string, events: readonly Event[], timeoutMs: number, signal: AbortSignal): Promise<AttemptOutcome> {
  const body = payloadBody(events, target.flatten);
  const headers = signedHeaders(target.secret, id, body, Math.floor(Date.now() / 1000));
  let res: Response;
  try {
    res = await fetch(target.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return { ok: false, retryable: true, statusCode: 0, error: timedOut ? `no answer within ${timeoutMs} ms` : `request failed: ${(err as Error).message}` };
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel().catch(() => {});
    return { ok: true, statusCode: res.status };
  }
  const text = await bodyPrefix(res);
  return {
    ok: false,
    retryable: isRetryableStatus(res.status),
    statusCode: res.status,
    error: `HTTP ${res.status}${text ? `: ${text}` : ''}`,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), Date.now()),
  };
}
