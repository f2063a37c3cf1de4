import { expect, test } from 'bun:test';
import { createLogger } from '../../src/log';
import { eventually } from '../helpers/eventually';
import { startTestService } from '../helpers/test-service';

test('each request is logged with the status it was answered with, a 201 built as a Response included', async () => {
  const lines: string[] = [];
  const svc = await startTestService({}, undefined, createLogger('info', (l) => lines.push(l)));
  expect((await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'logged' }] } })).status).toBe(201);
  expect((await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [] } })).status).toBe(400);
  expect((await svc.request('GET', '/nowhere')).status).toBe(404);
  // The line is written after the answer has gone out.
  const requests = () => lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  await eventually('three requests logged', async () => requests().length === 3);
  await svc.stop();
  expect(requests().map((e) => [e.method, e.path, e.status])).toEqual([
    ['POST', '/events', 201],
    ['POST', '/events', 400],
    ['GET', '/nowhere', 404],
  ]);
});
