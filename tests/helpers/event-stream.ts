import type { TestService } from './test-service';

/** One server-sent message: its `event` field (`message` when absent) and its parsed `data`. */
export interface StreamMessage {
  event: string;
  data: any;
}

/** A `GET /events/stream` read the way the console reads it: fetch with the key in a header. */
export interface OpenStream {
  response: Response;
  /** The next message (comments skipped); fails when the stream ends first. */
  next(): Promise<StreamMessage>;
  close(): Promise<void>;
}

export async function openStream(svc: TestService, query = '', key = svc.privateKey): Promise<OpenStream> {
  const response = await svc.request('GET', `/events/stream${query ? `?${query}` : ''}`, { key });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const next = async (): Promise<StreamMessage> => {
    for (;;) {
      const end = text.indexOf('\n\n');
      if (end >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const fields = block.split('\n').filter((line) => !line.startsWith(':'));
        if (fields.length === 0) continue;
        const field = (name: string) => fields.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        return { event: field('event') ?? 'message', data: JSON.parse(field('data') ?? 'null') };
      }
      const { done, value } = await reader.read();
      if (done) throw new Error('the stream ended');
      text += value;
    }
  };
  return { response, next, close: () => reader.cancel() };
}
