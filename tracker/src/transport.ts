/**
 * Sends one body so that it survives the page going away: a beacon (made for that; text/plain,
 * so no CORS preflight), else a keepalive fetch, which outlives the page too. No answer is read.
 */
export function send(endpoint: string, body: string): void {
  if (navigator.sendBeacon?.(endpoint, body)) return;
  fetch(endpoint, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => {});
}
