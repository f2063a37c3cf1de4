/** Baseline: a bare Bun server that parses the request body and answers 201, nothing else. */
Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  async fetch(req) {
    if (req.method !== 'POST') return new Response('ok');
    const body = (await req.json()) as { events: unknown[] };
    const n = body.events.length;
    return Response.json({ results: [], limit: n, offset: 0, total: n }, { status: 201 });
  },
});
