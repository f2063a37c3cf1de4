import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { pageOf } from '../http/pagination';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { CreatedWebhook, DeliveriesPage, type DeliveryStatus, ListDeliveriesQuery, ListWebhooksQuery, TestDelivery, Webhook, WebhookInput, WebhooksPage, WebhookUuidParams } from './model';
import type { WebhookSupervisor } from './supervisor';

/** `/webhooks`: the caller's workspace's webhooks, with a private key. */
export function webhookRoutes(store: WorkspaceStore, webhooks: WebhookSupervisor) {
  return new Elysia({ name: 'webhooks', normalize: false })
    .use(auth(store))
    .get('/webhooks', ({ query, principal }) => pageOf(webhooks.list(principal.workspace.workspaceId), query), {
      scope: 'private',
      query: ListWebhooksQuery,
      response: { 200: WebhooksPage, ...problems(400, 401, 403, 503) },
      detail: { tags: ['Webhooks'], summary: 'List webhooks', description: "The workspace's webhooks, oldest first." },
    })
    .post('/webhooks', ({ body, principal }) => webhooks.create(principal.workspace, body), {
      scope: 'private',
      body: WebhookInput,
      response: { 200: CreatedWebhook, ...problems(...BODY_PROBLEMS, 401, 403) },
      detail: {
        tags: ['Webhooks'],
        summary: 'Create a webhook',
        description: 'Matching events committed from now on are delivered, signed with the secret shown this once.',
      },
    })
    .delete('/webhooks/:uuid', ({ params, principal }) => webhooks.remove(principal.workspace.workspaceId, params.uuid), {
      scope: 'private',
      params: WebhookUuidParams,
      response: { 200: Webhook, ...problems(400, 401, 403, 404, 503) },
      detail: { tags: ['Webhooks'], summary: 'Delete a webhook', description: 'Its deliveries stop before the answer. Answers the deleted webhook.' },
    })
    .get(
      '/webhooks/:uuid/deliveries',
      ({ params, query, principal }) =>
        webhooks.deliveries(principal.workspace.workspaceId, params.uuid, { ...query, status: query.status as DeliveryStatus | undefined }),
      {
        scope: 'private',
        params: WebhookUuidParams,
        query: ListDeliveriesQuery,
        response: { 200: DeliveriesPage, ...problems(400, 401, 403, 404, 503) },
        detail: {
          tags: ['Webhooks'],
          summary: "A webhook's troubled deliveries",
          description: 'Deliveries that needed more than one attempt: being retried, failed, or recovered; the one holding the queue first.',
        },
      },
    )
    .post('/webhooks/:uuid/test', ({ params, principal }) => webhooks.sendTest(principal.workspace.workspaceId, params.uuid), {
      scope: 'private',
      params: WebhookUuidParams,
      response: { 200: TestDelivery, ...problems(400, 401, 403, 404) },
      detail: {
        tags: ['Webhooks'],
        summary: 'Send a test event',
        description:
          'Sends one synthetic event (of a type and name the webhook takes, `properties.test: true`), signed like any delivery, in one attempt outside the queue: not stored, not retried, not listed in deliveries. Answers how the attempt went; 200 whether or not the receiver accepted it.',
      },
    });
}
