import { expect, test } from 'bun:test';
import { createLogger } from '../../src/log';
import { eventually } from '../helpers/eventually';
import { startTestService } from '../helpers/test-service';

test('each request is logged with the status it was answered with; events taken in at debug level, the rest at info', async () => {
  const lines: string[] = [];
  // LOG_LEVEL for a service in a process of its own (TEST_RUNTIME=deno), the logger for one in this process.
  const svc = await startTestService({ LOG_LEVEL: 'debug' }, undefined, createLogger('debug', (l) => lines.push(l)));
  expect((await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'logged' }] } })).status).toBe(201);
  expect((await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [] } })).status).toBe(400);
  expect((await svc.request('GET', '/nowhere')).status).toBe(404);
  // A CORS preflight is answered before any route is looked for.
  const preflight = await svc.request('OPTIONS', '/events', { headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
  expect(preflight.status).toBe(204);
  // The line is written after the answer has gone out.
  const requests = () => lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  await eventually('four requests logged', async () => requests().length === 4);
  await svc.stop();
  expect(requests().map((e) => [e.method, e.path, e.status, e.level])).toEqual([
    ['POST', '/events', 201, 'debug'],
    ['POST', '/events', 400, 'info'],
    ['GET', '/nowhere', 404, 'info'],
    ['OPTIONS', '/events', 204, 'info'],
  ]);
});
