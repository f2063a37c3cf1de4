import type { Server } from 'elysia/universal';
import type { EventInput } from '../events/model';
import { clientAddress } from '../http/client-address';
import type { CidrList } from '../net/address-ranges';
import { campaignOf, type Campaign } from './campaign';
import type { Countries } from './countries';
import { httpUrl, trafficSource } from './traffic-source';
import { userAgentFacts } from './user-agent';

export interface EnrichmentOptions {
  trustedProxies: CidrList;
  /** Whether the client address is kept as `context.ip` (STORE_CLIENT_ADDRESS); by default it is only looked up. */
  storeClientAddress: boolean;
  countries: Countries;
}

/** The facts of one request that every event of it shares, worked out on first use. */
export interface RequestFacts {
  userAgent: string | null;
  address(): string;
  /** The country of `address()`. */
  country(): string | undefined;
}

type Context = Record<string, unknown>;

/** Whether `object` has a key, without making the array `Object.keys` would. */
function hasKeys(object: Context): boolean {
  for (const _ in object) return true;
  return false;
}

const objectOf = (value: unknown): Context | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Context) : undefined;

/**
 * Enrichment at collection, for every source: what the client address and user agent tell
 * (country, browser, system, device, robots) and what the page's URL and referrer tell (campaign,
 * traffic source), added to `context` beside what the client sent and never over it. The user
 * agent and address are the client's own (`context.userAgent`, `context.ip`) when it sent them,
 * as a server-side SDK forwarding a visitor's does, else the request's.
 */
export class Enrichment {
  constructor(private readonly options: EnrichmentOptions) {}

  /** The facts of `request` (its User-Agent, and its client address through the trusted proxies). */
  factsOf(request: Request, server: Server | null): RequestFacts {
    let address: string | undefined;
    let country: { code: string | undefined } | undefined;
    const facts: RequestFacts = {
      userAgent: request.headers.get('user-agent'),
      address: () => (address ??= clientAddress(request, server, this.options.trustedProxies)),
      country: () => (country ??= { code: this.options.countries.of(facts.address()) }).code,
    };
    return facts;
  }

  /** What enriches each event of `request`. */
  readonly forRequest = (request: Request, server: Server | null) => {
    const facts = this.factsOf(request, server);
    return (event: EventInput) => this.enrich(event, facts);
  };

  /** `event` with its context enriched; the same object when there is nothing to add. */
  enrich(event: EventInput, facts: RequestFacts): EventInput {
    const context: Context = event.context ?? {};
    const added: Context = {};
    this.addUserAgentFacts(context, added, typeof context.userAgent === 'string' ? context.userAgent : facts.userAgent);
    this.addLocation(context, added, typeof context.ip === 'string' ? context.ip : undefined, facts);
    addPageFacts(context, added, event.properties);
    return hasKeys(added) ? { ...event, context: { ...context, ...added } } : event;
  }

  private addUserAgentFacts(context: Context, added: Context, userAgent: string | null): void {
    if (!userAgent) return;
    const facts = userAgentFacts(userAgent);
    if (facts.browser && context.browser === undefined) added.browser = facts.browser;
    if (facts.os && context.os === undefined) added.os = facts.os;
    const device = objectOf(context.device);
    if (facts.deviceType && device?.type === undefined) added.device = { ...device, type: facts.deviceType };
    // A server-side SDK's user agent (node, curl) is no robot visiting pages: only browser-like ones are marked.
    if (facts.bot && facts.browserLike && context.bot === undefined) added.bot = true;
  }

  private addLocation(context: Context, added: Context, sentAddress: string | undefined, facts: RequestFacts): void {
    const location = objectOf(context.location);
    if (location?.country === undefined) {
      const country = sentAddress === undefined ? facts.country() : this.options.countries.of(sentAddress);
      if (country) added.location = { ...location, country };
    }
    if (this.options.storeClientAddress && context.ip === undefined) added.ip = facts.address();
  }
}

/** Campaign and traffic source from the page's URL and referrer (`context.page`, else a page's properties). */
function addPageFacts(context: Context, added: Context, properties: Record<string, unknown> | undefined): void {
  const page = objectOf(context.page);
  const url = httpUrl(page?.url ?? properties?.url);
  let campaign = objectOf(context.campaign) as Campaign | undefined;
  if (campaign === undefined) {
    campaign = campaignOf(url);
    if (campaign) added.campaign = campaign;
  }
  if (context.source === undefined) {
    const source = trafficSource(url, httpUrl(page?.referrer ?? properties?.referrer), typeof campaign?.source === 'string' ? campaign.source : undefined);
    if (source) added.source = source;
  }
}
