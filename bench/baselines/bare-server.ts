/**
 * Baseline: a bare Bun server that parses the request body and answers as the service does,
 * nothing else: `POST /events` 201 with the listing's shape, `POST /v1/track` 200 `{"success":true}`.
 */
const ACCEPTED = '{"success":true}';

Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  async fetch(req) {
    if (req.method !== 'POST') return new Response('ok');
    if (new URL(req.url).pathname === '/v1/track') {
      await req.json();
      return new Response(ACCEPTED, { headers: { 'content-type': 'application/json' } });
    }
    const body = (await req.json()) as { events: unknown[] };
    const n = body.events.length;
    return Response.json({ results: [], limit: n, offset: 0, total: n }, { status: 201 });
  },
});
