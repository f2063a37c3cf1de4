import { problemOf, requestWith, type Credentials } from './api';
import type { Event } from './types';

export interface StreamFilters {
  type?: string;
  event?: string;
  userId?: string;
}

export interface StreamHandlers {
  onOpen(): void;
  onEvent(event: Event): void;
  /** Events the service skipped because this page read too slowly. */
  onDropped(count: number): void;
  /** The service ended the stream (shutdown, workspace deleted). */
  onEnd(reason: string): void;
}

/**
 * Reads `GET /events/stream` with fetch, not EventSource: EventSource cannot send the key in the
 * Authorization header, and the key must never go in a URL. Resolves when the stream closes;
 * rejects with the ApiError of a refused request (401, 403, 429) or a network error.
 */
export async function readEventStream(credentials: Credentials, filters: StreamFilters, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
  const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  const res = await requestWith(credentials, 'GET', `/events/stream${query.size ? `?${query}` : ''}`, { signal, headers: { accept: 'text/event-stream' } });
  if (!res.ok || !res.body) throw await problemOf(res);
  handlers.onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let name = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (!data) continue; // a keep-alive comment
      const payload = JSON.parse(data);
      if (name === 'message') handlers.onEvent(payload as Event);
      else if (name === 'dropped') handlers.onDropped((payload as { dropped: number }).dropped);
      else if (name === 'end') handlers.onEnd((payload as { reason: string }).reason);
    }
  }
}
