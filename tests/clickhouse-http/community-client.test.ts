import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import ClickHouse from '@apla/clickhouse';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { IDENTIFY_JOIN, JOINED, startSeeded } from './fixture';

/**
 * A community client from npm, @apla/clickhouse, which reads JSON and JSONCompact documents: on
 * the service's port under /clickhouse, and on the interface's own port (CLICKHOUSE_INTERFACE_PORT)
 * as a tool that takes no path would be pointed at it.
 */
let svc: TestService;
let reader: CreatedWorkspace;

beforeAll(async () => {
  ({ svc, reader } = await startSeeded({ CLICKHOUSE_INTERFACE_PORT: '0' }));
});
afterAll(() => svc.stop());

describe('@apla/clickhouse', () => {
  const clients = () => ({
    'under /clickhouse': new ClickHouse({ host: '127.0.0.1', port: svc.port, path: '/clickhouse', user: 'default', password: reader.privateApiKey }),
    'on its own port': new ClickHouse({ host: '127.0.0.1', port: svc.clickhousePort!, user: 'default', password: reader.privateApiKey }),
  });

  test('the own port is served', () => {
    expect(svc.clickhousePort).toBeGreaterThan(0);
    expect(svc.clickhousePort).not.toBe(svc.port);
  });

  for (const where of ['under /clickhouse', 'on its own port'] as const) {
    test(`${where}: ping, events as objects and as arrays, the identify join`, async () => {
      const client = clients()[where];
      expect(await client.pinging()).toBe('Ok.\n');
      const objects = await client.querying("SELECT event, userId FROM events WHERE type = 'track' ORDER BY event", { dataObjects: true });
      expect(objects.data).toEqual([
        { event: 'Signed Up', userId: 'ada' },
        { event: 'Upgraded', userId: 'ada' },
      ]);
      const arrays = await client.querying("SELECT type, count() AS n FROM events GROUP BY type ORDER BY type");
      expect(arrays.meta).toEqual([
        { name: 'type', type: 'LowCardinality(String)' },
        { name: 'n', type: 'UInt64' },
      ]);
      expect(arrays.data).toEqual([
        ['identify', '1'],
        ['track', '2'],
      ]);
      expect((await client.querying(IDENTIFY_JOIN, { dataObjects: true })).data).toEqual(JOINED);
      expect((await client.querying('SHOW TABLES', { dataObjects: true })).data).toContainEqual({ name: 'events' });
    });
  }

  test('on its own port: another workspace refused, an unknown path answered in ClickHouse’s form', async () => {
    const refused = await fetch(`http://127.0.0.1:${svc.clickhousePort}/?query=SELECT%20*%20FROM%20system.users`, { headers: { authorization: `Basic ${btoa(`default:${reader.privateApiKey}`)}` } });
    expect({ status: refused.status, code: refused.headers.get('x-clickhouse-exception-code') }).toEqual({ status: 403, code: '497' });
    const unknown = await fetch(`http://127.0.0.1:${svc.clickhousePort}/no/such/path`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toStartWith('Code: ');
  });
});
