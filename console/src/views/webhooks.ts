import { api, describeError } from '../api';
import { h } from '../dom';
import { EVENT_TYPES, type CreatedWebhook, type Delivery, type Page, type TestDelivery, type Webhook } from '../types';
import { copyable } from '../ui/copy';
import { confirmAction, openDialog } from '../ui/dialog';
import { formatTime } from '../ui/format';
import { notice } from '../ui/notice';

/** Names typed as a comma-separated list; empty means every name. */
function names(text: string): string[] {
  const list = text.split(',').map((n) => n.trim()).filter(Boolean);
  return list.length > 0 ? list : ['*'];
}

function deliveriesTable(deliveries: Delivery[]): HTMLElement {
  return h(
    'table',
    { class: 'data-table' },
    h('thead', {}, h('tr', {}, ...['Status', 'Attempts', 'Last answer', 'Last error', 'First attempt', 'Last attempt', 'Next attempt', 'Events'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...deliveries.map((d) =>
        h(
          'tr',
          {},
          h('td', {}, h('span', { class: `pill pill-${d.status}` }, d.status), d.holdsQueue ? h('span', { class: 'muted' }, ' holds the queue') : null),
          h('td', {}, d.attempts),
          h('td', {}, d.lastStatusCode ?? 'no answer'),
          h('td', { class: 'wrap' }, d.lastError || '—'),
          h('td', {}, formatTime(d.firstAttemptAt)),
          h('td', {}, formatTime(d.lastAttemptAt)),
          h('td', {}, d.nextAttemptAt ? formatTime(d.nextAttemptAt) : '—'),
          h('td', {}, d.eventUuids.length),
        ),
      ),
    ),
  );
}

/** Webhooks of the workspace: list, create (the secret shown once), delete, deliveries, and a test event. */
export function webhooksView(root: HTMLElement): void {
  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://example.com/hooks/analytics', autocomplete: 'off' });
  const types = EVENT_TYPES.map((t) => h('input', { type: 'checkbox', name: 'eventTypes', value: t }));
  const eventNames = h('input', { type: 'text', name: 'eventNames', placeholder: 'signup, purchase (empty: every name)', autocomplete: 'off' });
  const batching = h('input', { type: 'checkbox', name: 'enableBatching' });
  const flatten = h('input', { type: 'checkbox', name: 'flatten' });
  const formMessage = h('div', { 'aria-live': 'polite' });
  const create = h('button', { type: 'submit', class: 'primary' }, 'Create webhook');
  const form = h(
    'form',
    { class: 'card form-card', 'aria-label': 'New webhook' },
    h('h2', {}, 'New webhook'),
    h('label', { class: 'field wide' }, h('span', {}, 'URL'), url),
    h('fieldset', { class: 'checks' }, h('legend', {}, 'Event types (none checked: every type)'), ...types.map((box) => h('label', { class: 'check' }, box, box.value))),
    h('label', { class: 'field wide' }, h('span', {}, 'Event names'), eventNames),
    h('div', { class: 'checks' }, h('label', { class: 'check' }, batching, 'Batch events'), h('label', { class: 'check' }, flatten, 'Flatten payload')),
    formMessage,
    h('div', { class: 'form-actions' }, h('span', { class: 'spacer' }), create),
  );
  const list = h('div', { class: 'webhook-list' });
  const details = h('section', { class: 'deliveries', 'aria-live': 'polite' });
  root.append(h('div', { class: 'page-header' }, h('h1', {}, 'Webhooks')), list, details, form);

  const showDeliveries = async (hook: Webhook) => {
    details.replaceChildren(h('h2', {}, 'Deliveries of ', h('code', {}, hook.url)), h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await api<Page<Delivery>>('GET', `/webhooks/${hook.uuid}/deliveries?limit=50`);
      details.replaceChildren(
        h('h2', {}, 'Deliveries of ', h('code', {}, hook.url)),
        h('p', { class: 'muted' }, 'Deliveries that needed more than one attempt: being retried, failed, or recovered. Deliveries that succeeded at once are not listed.'),
        page.results.length === 0 ? notice('empty', 'No troubled deliveries', 'Every delivery so far succeeded on its first attempt, or none was due yet.') : deliveriesTable(page.results),
      );
    } catch (err) {
      details.replaceChildren(notice('error', 'Deliveries could not be read', describeError(err)));
    }
  };

  const sendTest = async (hook: Webhook, button: HTMLButtonElement) => {
    button.disabled = true;
    button.textContent = 'Sending…';
    try {
      const result = await api<TestDelivery>('POST', `/webhooks/${hook.uuid}/test`);
      details.replaceChildren(
        h('h2', {}, 'Test event to ', h('code', {}, hook.url)),
        result.delivered
          ? notice('info', `Delivered: the receiver answered ${result.statusCode} in ${result.ms} ms`, `A ${result.event.type} event named ${result.event.event} with properties.test = true; it is not stored.`)
          : notice('error', 'Not delivered', `${result.error ?? 'failed'} (after ${result.ms} ms).`),
      );
    } catch (err) {
      details.replaceChildren(notice('error', 'The test could not be sent', describeError(err)));
    } finally {
      button.disabled = false;
      button.textContent = 'Send test event';
    }
  };

  const load = async () => {
    try {
      const page = await api<Page<Webhook>>('GET', '/webhooks?limit=1000');
      if (page.results.length === 0) {
        list.replaceChildren(notice('empty', 'No webhooks yet', 'A webhook receives matching events by POST, signed, as they are stored. Create one below.'));
        return;
      }
      list.replaceChildren(
        h(
          'table',
          { class: 'data-table' },
          h('thead', {}, h('tr', {}, ...['URL', 'Types', 'Names', 'Options', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            {},
            ...page.results.map((hook) => {
              const deliveries = h('button', { type: 'button', class: 'secondary small' }, 'Deliveries');
              const test = h('button', { type: 'button', class: 'secondary small' }, 'Send test event');
              const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
              deliveries.addEventListener('click', () => void showDeliveries(hook));
              test.addEventListener('click', () => void sendTest(hook, test));
              remove.addEventListener('click', async () => {
                if (!(await confirmAction('Delete this webhook?', `Deliveries to ${hook.url} stop at once. This cannot be undone.`, 'Delete webhook'))) return;
                try {
                  await api('DELETE', `/webhooks/${hook.uuid}`);
                  details.replaceChildren();
                  await load();
                } catch (err) {
                  details.replaceChildren(notice('error', 'The webhook was not deleted', describeError(err)));
                }
              });
              const options = [hook.enableBatching ? 'batched' : '', hook.flatten ? 'flattened' : ''].filter(Boolean).join(', ');
              return h(
                'tr',
                {},
                h('td', { class: 'wrap' }, h('code', {}, hook.url)),
                h('td', {}, hook.eventTypes.join(', ')),
                h('td', {}, hook.eventNames.join(', ')),
                h('td', {}, options || '—'),
                h('td', {}, formatTime(hook.createdAt)),
                h('td', { class: 'actions' }, deliveries, test, remove),
              );
            }),
          ),
        ),
      );
    } catch (err) {
      list.replaceChildren(notice('error', 'Webhooks could not be read', describeError(err)));
    }
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    create.disabled = true;
    formMessage.replaceChildren();
    const checked = types.filter((b) => b.checked).map((b) => b.value);
    try {
      const hook = await api<CreatedWebhook>('POST', '/webhooks', {
        url: url.value.trim(),
        eventTypes: checked.length > 0 ? checked : ['*'],
        eventNames: names(eventNames.value),
        enableBatching: batching.checked,
        flatten: flatten.checked,
      });
      form.reset();
      await load();
      await openDialog(
        'Webhook created',
        h(
          'div',
          { class: 'stack' },
          h('p', {}, 'Every delivery is signed with this secret (Standard Webhooks). It is shown this once: keep it where your receiver can read it.'),
          copyable('Signing secret', hook.secret),
        ),
        [{ label: 'Done', value: '', kind: 'primary' }],
      );
    } catch (err) {
      formMessage.replaceChildren(notice('error', 'The webhook was not created', describeError(err)));
    } finally {
      create.disabled = false;
    }
  });
  void load();
}
