import type { EventInput } from '../events/model';
import type { ProblemError } from '../http/problem';
import type { PlausibleEventBody } from './model';
import { InvalidPlausibleEvent } from './problems';
import { httpUrl } from './traffic-source';

type Scalar = string | number | boolean;

/** A Plausible event, read: its long and short field names settled, its values checked. */
export interface PlausibleEvent {
  name: string;
  url: URL;
  /** Lowercase site domains, each once: Plausible records the event to each. */
  domains: string[];
  referrer: string;
  props: Record<string, Scalar>;
  revenue?: { amount: number; currency: string };
  interactive: boolean;
  /** The site routes by the URL's fragment: the fragment is part of the path. */
  hashMode: boolean;
  /** The tracker's version (`v`), when it says. */
  version?: string;
}

/** Plausible's bounds on custom properties: more, longer, or non-scalar ones are left out, as Plausible leaves them. */
const MAX_PROPS = 30;
const MAX_PROP_KEY = 300;
const MAX_PROP_VALUE = 2000;

function propsOf(sent: PlausibleEventBody['props']): Record<string, Scalar> {
  let object: unknown = sent;
  if (typeof sent === 'string') {
    try {
      object = JSON.parse(sent);
    } catch {
      return {};
    }
  }
  const props: Record<string, Scalar> = {};
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return props;
  let n = 0;
  for (const [key, value] of Object.entries(object)) {
    if (n === MAX_PROPS) break;
    if (key === '' || key.length > MAX_PROP_KEY) continue;
    if (typeof value === 'string' ? value === '' || value.length > MAX_PROP_VALUE : typeof value !== 'number' && typeof value !== 'boolean') continue;
    props[key] = value as Scalar;
    n++;
  }
  return props;
}

/** The event name `@plausible-analytics/tracker` gives its time-on-page and scroll-depth reports. */
const ENGAGEMENT = 'engagement';

/** The event a body describes; 400 (InvalidPlausibleEvent) when a required field is missing or the url is no http(s) URL. */
export function readPlausibleEvent(body: PlausibleEventBody): PlausibleEvent {
  const errors: ProblemError[] = [];
  const name = body.name ?? body.n;
  const urlText = body.url ?? body.u;
  const domainText = body.domain ?? body.d;
  if (!name) errors.push({ pointer: '/name', detail: 'is required' });
  const url = httpUrl(urlText);
  if (!url) errors.push({ pointer: '/url', detail: urlText ? 'must be an absolute http(s) URL' : 'is required' });
  const domains = [...new Set((domainText ?? '').split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== ''))];
  if (domains.length === 0) errors.push({ pointer: '/domain', detail: 'is required: the site domain, or several separated by commas' });
  if (errors.length > 0) throw new InvalidPlausibleEvent(errors);
  const revenue = body.revenue ?? body.$;
  const hash = body.hashMode ?? body.h;
  return {
    name: name!,
    url: url!,
    domains,
    referrer: body.referrer ?? body.r ?? '',
    props: propsOf(body.props ?? body.p),
    ...(revenue ? { revenue: { amount: Number(revenue.amount), currency: revenue.currency.toUpperCase() } } : {}),
    // Engagement events (time on page, scroll depth) are sent as a visitor leaves a page, not by
    // something the visitor did: they must not turn a bounce into a visit that engaged.
    interactive: (body.interactive ?? body.i) !== false && name !== ENGAGEMENT,
    hashMode: hash === true || hash === 1,
    ...(typeof body.v === 'number' || typeof body.v === 'string' ? { version: String(body.v) } : {}),
  };
}

/**
 * A Plausible event as the service stores it: `pageview` as a page event, any other name as a
 * track event of that name, its visitor the cookieless id, Segment's page fields in properties and
 * `context.page`, the custom properties beside them, revenue as `revenue` and `currency`.
 */
export function toEventInput(event: PlausibleEvent, anonymousId: string, userAgent: string): EventInput {
  const { url } = event;
  const page = { url: url.href, path: event.hashMode ? url.pathname + url.hash : url.pathname, referrer: event.referrer, search: url.search };
  const isPage = event.name === 'pageview';
  const properties: Record<string, unknown> = { ...event.props, ...(isPage ? page : {}) };
  if (event.revenue) {
    properties.revenue = event.revenue.amount;
    properties.currency = event.revenue.currency;
  }
  const context: Record<string, unknown> = { page, userAgent, library: event.version === undefined ? { name: 'plausible' } : { name: 'plausible', version: event.version } };
  if (!event.interactive) context.interactive = false;
  return {
    type: isPage ? 'page' : 'track',
    ...(isPage ? {} : { event: event.name }),
    anonymousId,
    properties,
    context,
  } as EventInput;
}
