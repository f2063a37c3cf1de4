import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Analytics from '@rudderstack/rudder-sdk-node';
import { uniqueName } from '../helpers/engine-dir';
import { listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

interface SentRequest {
  contentType: string;
  contentEncoding: string;
  status: number;
}

/** RudderStack's Node SDK pointed at the service; what its HTTP client sent and every error are kept. */
function rudderClient(on: TestService) {
  const errors: unknown[] = [];
  const client = new Analytics(on.publicKey, { dataPlaneUrl: on.url, flushAt: 100, flushInterval: 60_000, logLevel: 'error', errorHandler: (err: unknown) => errors.push(err) } as never);
  const sent: SentRequest[] = [];
  // The SDK's own axios instance; a response interceptor sees the headers as they went out.
  (client as unknown as { axiosInstance: { interceptors: { response: { use(f: (r: any) => any): void } } } }).axiosInstance.interceptors.response.use((response) => {
    const headers = response.config.headers;
    sent.push({ contentType: String(headers['Content-Type']), contentEncoding: String(headers['Content-Encoding']), status: response.status });
    return response;
  });
  return { client, errors, sent };
}

describe('@rudderstack/rudder-sdk-node against the service', () => {
  test('its gzip + form-urlencoded batch is stored, every call once', async () => {
    const { client, errors, sent } = rudderClient(svc);
    const userId = uniqueName('rudder_user');
    client.identify({ userId, traits: { plan: 'pro' } });
    client.track({ userId, event: 'Order Completed', properties: { revenue: 42.5 } });
    client.page({ userId, name: 'Pricing', properties: { path: '/pricing' } });
    client.screen({ userId, name: 'Home' });
    client.group({ userId, groupId: 'acme', traits: { seats: 12 } });
    client.alias({ userId, previousId: 'anon-7' });
    await client.flush();
    expect(errors).toEqual([]);
    // It sends its first call at once, the rest when flushed: two requests, both gzip + form-urlencoded.
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) expect(request).toEqual({ contentType: 'application/x-www-form-urlencoded', contentEncoding: 'gzip', status: 200 });

    const { body } = await listEvents(svc, `userId=${userId}`);
    const types = (body.results as Array<Record<string, any>>).map((e) => e.type).sort();
    expect(types).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track']);
    const byType = Object.fromEntries((body.results as Array<Record<string, any>>).map((e) => [e.type, e]));
    expect(byType.track.properties).toEqual({ revenue: 42.5 });
    expect(byType.identify.traits).toEqual({ plan: 'pro' });
    expect(byType.track.context.library.name).toBe('analytics-node');
    for (const e of body.results) expect(e.messageId).toEqual(expect.any(String));
  });
});
