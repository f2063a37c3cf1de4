import { maySend } from './consent';
import { callContext, pageFacts, type Props } from './context';
import { randomId } from './ids';
import { loadIdentity } from './identity';
import { trackLinks } from './links';
import { onNavigation } from './navigation';
import { readSettings } from './settings';
import { send } from './transport';

/** What the page calls: `ea.track('Signed Up', { plan: 'pro' })`. */
interface Api {
  track(event: string, properties?: Props): void;
  identify(userId: string, traits?: Props): void;
  page(properties?: Props): void;
}

type Method = keyof Api;
/** Calls made before the script loaded, as the page's stub queued them: `[method, arguments]`. */
type Queued = [Method, unknown[]];

const script = document.currentScript as HTMLScriptElement;
const settings = readSettings(script);
const enabled = maySend(settings);
const identity = loadIdentity(settings.cookieless);
/** The path and query, and the URL, of the last page call. */
let lastPage = '';
let lastUrl = '';
let referrer = document.referrer;

/** Sends one Segment call to the collection path, as a batch of one with the key in the body. */
function call(type: 'page' | 'track' | 'identify', fields: Props): void {
  if (!enabled) return;
  const now = new Date().toISOString();
  const message = {
    type,
    messageId: randomId(),
    timestamp: now,
    anonymousId: identity.anonymousId,
    userId: identity.userId,
    context: callContext(pageFacts(referrer)),
    ...fields,
  };
  send(settings.endpoint, JSON.stringify({ writeKey: settings.key, sentAt: now, batch: [message] }));
}

const api: Api = {
  track: (event, properties) => call('track', { event, properties }),
  identify(userId, traits) {
    identity.identify(userId);
    call('identify', { traits });
  },
  page(properties) {
    lastPage = location.pathname + location.search;
    lastUrl = location.href;
    call('page', { properties: { ...pageFacts(referrer), ...properties } });
  },
};

/** A page call when a single-page app has moved to another path or query; its referrer is the page before. */
function navigated(): void {
  if (location.pathname + location.search === lastPage) return;
  referrer = lastUrl;
  api.page();
}

const win = window as unknown as Record<string, unknown>;
const queued = (win[settings.global] as { q?: Queued[] } | undefined)?.q ?? [];
win[settings.global] = api;
// Queued calls first, so that an identify made before load names the visitor of the first page.
for (const [method, args] of queued) (api[method] as (...a: unknown[]) => void)(...args);
api.page();
onNavigation(navigated);
if (settings.trackLinks) trackLinks(api.track);
