import type { TestService } from './test-service';

/** A webhook as POST /webhooks answers it, secret included. */
export interface CreatedWebhook {
  uuid: string;
  url: string;
  enableBatching: boolean;
  createdAt: string;
  eventTypes: string[];
  eventNames: string[];
  flatten: boolean;
  secret: string;
}

/** POST /webhooks (with the private key unless told); fails the test unless it answers 200. */
export async function createWebhook(svc: TestService, input: Record<string, unknown>, key = svc.privateKey): Promise<CreatedWebhook> {
  const res = await svc.request('POST', '/webhooks', { key, body: input });
  if (res.status !== 200) throw new Error(`POST /webhooks answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as CreatedWebhook;
}

/** GET /webhooks/{uuid}/deliveries; answers the page. */
export async function deliveriesOf(svc: TestService, uuid: string, query = '', key = svc.privateKey): Promise<any> {
  const res = await svc.request('GET', `/webhooks/${uuid}/deliveries${query ? `?${query}` : ''}`, { key });
  if (res.status !== 200) throw new Error(`GET deliveries answered ${res.status}: ${await res.text()}`);
  return res.json();
}
