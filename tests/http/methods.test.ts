import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createLogger } from '../../src/log';
import { eventually } from '../helpers/eventually';
import { SERVED_BY_DENO } from '../helpers/deno-service';
import { rawExchange } from '../helpers/raw-http';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
const lines: string[] = [];
beforeAll(async () => {
  // LOG_LEVEL for a service in a process of its own (TEST_RUNTIME=deno), the logger for one in this process.
  svc = await startTestService({ LOG_LEVEL: 'debug' }, undefined, createLogger('debug', (l) => lines.push(l)));
});
afterAll(() => svc.stop());

const SERVED = 'GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS';

/** The request-log lines of requests with `method`, as [path, status]. */
const logged = (method: string) =>
  lines
    .map((l) => JSON.parse(l))
    .filter((e) => e.msg === 'request' && e.method === method)
    .map((e) => [e.path, e.status]);

/** Sends one request as written (raw, so that no client library fixes it up) and returns its answer. */
async function ask(request: string, bodiless = false) {
  const { responses } = await rawExchange(svc.url, request, [bodiless]);
  expect(responses).toHaveLength(1);
  return responses[0]!;
}

describe('methods the service implements on no route', () => {
  test('CONNECT, to this service or another host: 501 problem+json saying it is no proxy, logged with its target', async () => {
    for (const target of [new URL(svc.url).host, 'example.com:443']) {
      const res = await ask(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      expect(res.status).toBe(501);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(JSON.parse(res.body)).toEqual({
        type: 'about:blank',
        title: 'Not Implemented',
        status: 501,
        detail: `the service is not a proxy and does not implement CONNECT; it answers ${SERVED}`,
      });
    }
    await eventually('both CONNECTs logged', async () => logged('CONNECT').length === 2);
    // Bun hands a CONNECT over with its target as the URL; Deno makes it http://target/.
    const path = (target: string) => (SERVED_BY_DENO ? '/' : target);
    expect(logged('CONNECT')).toEqual([
      [path(new URL(svc.url).host), 501],
      [path('example.com:443'), 501],
    ]);
  });

  test('TRACE and a WebDAV method: 501 problem+json, logged', async () => {
    for (const method of ['TRACE', 'PROPFIND']) {
      const res = await ask(`${method} /events HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      expect(res.status, method).toBe(501);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(res.body).detail).toBe(`the service does not implement ${method}; it answers ${SERVED}`);
      await eventually(`${method} logged`, async () => logged(method).length === 1);
      expect(logged(method)).toEqual([['/events', 501]]);
    }
  });
});

describe('a path served with other methods', () => {
  test('405 problem+json with Allow, HEAD listed wherever GET is', async () => {
    const cases: Array<[string, string, string, string]> = [
      ['DELETE', '/events', 'GET, HEAD, POST', 'GET, HEAD and POST'],
      // PATCH is served (the catalog's curated fields), elsewhere only.
      ['PATCH', '/events', 'GET, HEAD, POST', 'GET, HEAD and POST'],
      ['GET', '/queries', 'POST', 'POST'],
      ['DELETE', '/tracking-plan', 'GET, HEAD, PUT', 'GET, HEAD and PUT'],
      ['PUT', `/webhooks/${crypto.randomUUID()}`, 'DELETE', 'DELETE'],
    ];
    for (const [method, path, allow, inWords] of cases) {
      const res = await ask(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n`);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(res.body).detail).toBe(`${path} does not take ${method}; it takes ${inWords}`);
    }
  });

  test('a HEAD of a path served only with POST: 405 with Allow and no body', async () => {
    const res = await ask('HEAD /queries HTTP/1.1\r\nHost: localhost\r\n\r\n', true);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  test('OPTIONS that is no CORS preflight the service answers stays 404, as a refused preflight does', async () => {
    const res = await ask('OPTIONS /events HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).detail).toBe('no route OPTIONS /events');
  });
});

describe('request targets without scheme and host', () => {
  test('an HTTP/1.0 request without Host to an unknown path: 404 problem+json (its URL is only a path), logged', async () => {
    const res = await ask('GET /nowhere-without-host HTTP/1.0\r\n\r\n');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body).detail).toBe('no route GET /nowhere-without-host');
    await eventually('logged', async () => lines.some((l) => l.includes('/nowhere-without-host')));
  });

  test('a Segment call without Host with its writeKey in the query string is taken', async () => {
    const body = JSON.stringify({ event: 'no-host', anonymousId: 'a1' });
    const res = await ask(`POST /v1/track?writeKey=${svc.publicKey} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(res.status).toBe(200);
  });
});
