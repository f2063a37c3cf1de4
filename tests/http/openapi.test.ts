import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
let document: Record<string, any>;
beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.request('GET', '/docs/json');
  expect(res.status).toBe(200);
  document = (await res.json()) as Record<string, any>;
});
afterAll(() => svc.stop());

/** Every route, its success status, and whether it takes a JSON body. */
const ROUTES: Array<[method: string, path: string, success: string, body: boolean]> = [
  ['get', '/', '200', false],
  ['post', '/events', '201', true],
  ['post', '/api/event', '202', true],
  ['get', '/events', '200', false],
  ['get', '/events/stream', '200', false],
  ['get', '/whoami', '200', false],
  ['post', '/queries', '200', true],
  ['get', '/workspaces', '200', false],
  ['post', '/workspaces', '200', true],
  ['get', '/workspaces/{workspaceId}', '200', false],
  ['put', '/workspaces/{workspaceId}', '200', true],
  ['delete', '/workspaces/{workspaceId}', '200', false],
  ['post', '/workspaces/{workspaceId}/keys', '201', true],
  ['get', '/webhooks', '200', false],
  ['post', '/webhooks', '200', true],
  ['delete', '/webhooks/{uuid}', '200', false],
  ['get', '/webhooks/{uuid}/deliveries', '200', false],
  ['post', '/webhooks/{uuid}/test', '200', false],
  ['get', '/metrics', '200', false],
  ['post', '/regulations', '202', true],
  ['get', '/events/export', '200', false],
  ['post', '/events/import', '200', false],
  ['post', '/backups', '202', false],
  ['get', '/backups/{id}', '200', false],
  ['post', '/queries/export', '200', true],
  ['get', '/regulations', '200', false],
  ['get', '/regulations/{id}', '200', false],
  ['get', '/persons', '200', false],
  ['get', '/persons/{personId}', '200', false],
  ['get', '/persons/{personId}/events', '200', false],
  ['get', '/groups', '200', false],
  ['get', '/groups/{groupId}', '200', false],
  ['post', '/cohorts', '201', true],
  ['get', '/cohorts', '200', false],
  ['get', '/cohorts/{cohortId}', '200', false],
  ['put', '/cohorts/{cohortId}', '200', true],
  ['delete', '/cohorts/{cohortId}', '200', false],
  ...['trends', 'funnels', 'retention', 'paths', 'stickiness', 'lifecycle'].map((kind) => ['post', `/insights/${kind}`, '200', true] as [string, string, string, boolean]),
  ...['trends', 'funnels', 'retention', 'stickiness', 'lifecycle'].map((kind) => ['post', `/insights/${kind}/persons`, '200', true] as [string, string, string, boolean]),
  ['post', '/insights/saved', '201', true],
  ['get', '/insights/saved', '200', false],
  ['get', '/insights/saved/{id}', '200', false],
  ['put', '/insights/saved/{id}', '200', true],
  ['delete', '/insights/saved/{id}', '200', false],
  ['post', '/dashboards', '201', true],
  ['get', '/dashboards', '200', false],
  ['get', '/dashboards/{id}', '200', false],
  ['put', '/dashboards/{id}', '200', true],
  ['delete', '/dashboards/{id}', '200', false],
  ['get', '/dashboards/{id}/results', '200', false],
  ['get', '/catalog/events', '200', false],
  ['get', '/catalog/properties', '200', false],
  ['patch', '/catalog/events/{name}', '200', true],
  ['patch', '/catalog/properties/{name}', '200', true],
  ['get', '/tracking-plan', '200', false],
  ['put', '/tracking-plan', '200', true],
  ['get', '/violations', '200', false],
  ['get', '/quarantine', '200', false],
  ['post', '/quarantine/replay', '200', false],
  ['post', '/api/v2/query', '200', false],
  ...['batch', 'track', 'identify', 'page', 'screen', 'group', 'alias'].map((call) => ['post', `/v1/${call}`, '200', true] as [string, string, string, boolean]),
];

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1 (checked by @apidevtools/swagger-parser)', async () => {
    expect(document.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(document) as unknown as Parameters<typeof SwaggerParser.validate>[0]);
  });

  test('has every route with its request body, its answer and its problems, and no route it does not serve', () => {
    const listed = Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    expect(listed.sort()).toEqual(ROUTES.map(([method, path]) => `${method} ${path}`).sort());
    for (const [method, path, success, body] of ROUTES) {
      const op = document.paths[path][method];
      const answer = op.responses[success];
      expect(answer?.content, `${method} ${path} ${success}`).toBeDefined();
      expect(Object.values<any>(answer.content)[0].schema, `${method} ${path}`).toBeDefined();
      if (body) {
        expect(op.requestBody.content['application/json'].schema.type, `${method} ${path} body`).toBe('object');
        expect(op.responses['400'].content['application/problem+json'].schema.properties.errors, `${method} ${path} 400`).toBeDefined();
      }
      // The health check and Plausible's Events API take no key.
      if (path !== '/' && path !== '/api/event') expect(op.responses['401'], `${method} ${path} 401`).toBeDefined();
    }
  });

  test('documents the query parameters, path parameters, examples and the key schemes', () => {
    const listing = document.paths['/events'].get.parameters.map((p: any) => p.name);
    for (const name of ['event', 'uuid', 'messageId', 'userId', 'groupId', 'anonymousId', 'instanceId', 'type', 'startDate', 'endDate', 'limit', 'offset', 'orderByField', 'orderByDirection']) {
      expect(listing).toContain(name);
    }
    expect(document.paths['/workspaces/{workspaceId}'].get.parameters).toContainEqual(expect.objectContaining({ name: 'workspaceId', in: 'path', required: true }));
    for (const path of ['/events', '/queries', '/workspaces', '/webhooks', '/v1/batch', '/v1/track']) {
      expect(document.paths[path].post.requestBody.content['application/json'].schema.examples?.length, path).toBeGreaterThan(0);
    }
    expect(document.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      basic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
    });
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.paths['/'].get.security).toEqual([]);
    expect(document.paths['/v1/batch'].post.security).toEqual([{ bearer: [] }, { basic: [] }]);
  });

  test('the interactive page is served', async () => {
    const res = await svc.request('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    // Scalar, built with the console and served locally (tests/console/serving.test.ts).
    expect(await res.text()).toContain('/console/assets/scalar-standalone-');
  });
});
