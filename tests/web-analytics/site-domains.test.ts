import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { VisitorSalts } from '../../src/web-analytics/visitor-salts';
import { testInProcess } from '../helpers/deno-service';
import { serviceOverOldMetadata } from '../helpers/old-metadata';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const domainOf = (label: string) => `${uniqueName(label).toLowerCase().replace(/_/g, '-')}.example`;

describe('workspace siteDomains', () => {
  test('set on POST (lowercased, each once), returned, replaced by PUT, kept when PUT leaves them out; [] by default', async () => {
    const a = domainOf('a');
    const ws = (await createWorkspace(svc, { name: uniqueName('sites'), siteDomains: [a.toUpperCase(), a, `www.${a}`] })) as any;
    expect(ws.siteDomains).toEqual([a, `www.${a}`]);
    expect(((await (await svc.request('GET', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey })).json()) as any).siteDomains).toEqual([a, `www.${a}`]);
    const put = await svc.request('PUT', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey, body: { name: ws.name, siteDomains: [a] } });
    expect(((await put.json()) as any).siteDomains).toEqual([a]);
    const kept = await svc.request('PUT', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey, body: { name: ws.name } });
    expect(((await kept.json()) as any).siteDomains).toEqual([a]);
    expect(((await createWorkspace(svc, { name: uniqueName('plain') })) as any).siteDomains).toEqual([]);
  });

  test('a domain another workspace lists is 409 naming it and that workspace; its own domains are no conflict on PUT', async () => {
    const taken = domainOf('taken');
    const owner = await createWorkspace(svc, { name: uniqueName('owner'), siteDomains: [taken] });
    const res = await svc.request('POST', '/workspaces', { key: svc.privateKey, body: { name: uniqueName('other'), siteDomains: [domainOf('free'), taken.toUpperCase()] } });
    expect(res.status).toBe(409);
    expect(((await res.json()) as any).detail).toBe(`site domain ${taken} belongs to workspace ${owner.workspaceId} (${JSON.stringify(owner.name)}); remove it there first`);
    const other = await createWorkspace(svc, { name: uniqueName('other') });
    expect((await svc.request('PUT', `/workspaces/${other.workspaceId}`, { key: svc.privateKey, body: { name: other.name, siteDomains: [taken] } })).status).toBe(409);
    expect((await svc.request('PUT', `/workspaces/${owner.workspaceId}`, { key: svc.privateKey, body: { name: owner.name, siteDomains: [taken] } })).status).toBe(200);
  });

  test('anything but a host name is 400, as are more than 100', async () => {
    for (const bad of ['https://example.com', 'example.com/path', 'example.com:8080', '-bad.example', 'a b.example', '']) {
      const res = await svc.request('POST', '/workspaces', { key: svc.privateKey, body: { name: uniqueName('bad'), siteDomains: [bad] } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).errors[0].pointer).toBe('/siteDomains/0');
    }
    const many = Array.from({ length: 101 }, (_, i) => `s${i}.example`);
    expect((await svc.request('POST', '/workspaces', { key: svc.privateKey, body: { name: uniqueName('many'), siteDomains: many } })).status).toBe(400);
  });

  testInProcess('workspaces written before siteDomains existed read as none after the upgrade', async () => {
    const { upgraded, database } = await serviceOverOldMetadata(svc, 14);
    try {
      const listed = (await (await upgraded.request('GET', '/workspaces', { key: upgraded.privateKey })).json()) as any;
      expect(listed.results).toEqual([expect.objectContaining({ databaseName: database, siteDomains: [] })]);
    } finally {
      await upgraded.stop();
    }
  });
});

describe('visitor salts', () => {
  testInProcess("a day's salt survives a restart (another instance reads it); a new day's deletes the older ones", async () => {
    const day = Date.UTC(2031, 4, 1, 10);
    const first = await new VisitorSalts(svc.storage, svc.config.metaDatabase, '').saltOf(day);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const restarted = new VisitorSalts(svc.storage, svc.config.metaDatabase, '');
    expect(await restarted.saltOf(day + 3_600_000)).toBe(first);
    const next = await restarted.saltOf(day + 86_400_000);
    expect(next).not.toBe(first);
    const rows = await svc.storage.query(`SELECT toString(day) AS day FROM ${svc.config.metaDatabase}.visitor_salts WHERE day >= '2031-05-01'`);
    expect(rows.map((r) => r.day)).toEqual(['2031-05-02']);
  });
});
