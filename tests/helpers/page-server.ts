import type { Server } from 'bun';

/**
 * A web server for test pages, on its own port: the pages' origin is another than the service's,
 * as a customer's site would be. Tests put the files it serves in `files`.
 */
export class PageServer {
  readonly files = new Map<string, { body: string; type: string }>();
  private readonly server: Server<undefined>;

  constructor() {
    this.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (request) => {
        const file = this.files.get(new URL(request.url).pathname);
        return file ? new Response(file.body, { headers: { 'content-type': file.type } }) : new Response('not found', { status: 404 });
      },
    });
  }

  get origin(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Serves `body` as an HTML page at `path`; returns its URL. */
  page(path: string, body: string): string {
    this.files.set(path, { body, type: 'text/html; charset=utf-8' });
    return this.origin + path;
  }

  script(path: string, body: string): void {
    this.files.set(path, { body, type: 'text/javascript; charset=utf-8' });
  }

  stop(): void {
    this.server.stop(true);
  }
}
