import { t } from 'elysia';

/** Custom properties: an object, or (plausible-tracker 0.3) its JSON text. */
const Props = t.Union([t.Record(t.String(), t.Unknown()), t.String()], { error: 'must be an object of scalar values, or its JSON text' });
const Revenue = t.Object(
  {
    currency: t.String({ pattern: '^[A-Za-z]{3}$', error: 'must be an ISO 4217 currency code such as EUR' }),
    amount: t.Union([t.Number(), t.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$' })], { error: 'must be a number, or its text' }),
  },
  { error: 'must be { currency, amount }' },
);

/**
 * The body of Plausible's Events API (https://plausible.io/docs/events-api), with the short names
 * its trackers send (`n`, `u`, `d`, `r`, `p`, `$`, `i`, `h`, and `v`, the tracker's version). Other
 * fields (screen width, engagement figures) are accepted and ignored.
 */
export const PlausibleEventBody = t.Object(
  {
    name: t.Optional(t.String({ maxLength: 120 })),
    n: t.Optional(t.String({ maxLength: 120 })),
    url: t.Optional(t.String({ maxLength: 2000 })),
    u: t.Optional(t.String({ maxLength: 2000 })),
    domain: t.Optional(t.String({ maxLength: 2000 })),
    d: t.Optional(t.String({ maxLength: 2000 })),
    referrer: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
    r: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
    props: t.Optional(Props),
    p: t.Optional(Props),
    revenue: t.Optional(Revenue),
    $: t.Optional(Revenue),
    interactive: t.Optional(t.Boolean({ error: 'must be true or false' })),
    i: t.Optional(t.Boolean({ error: 'must be true or false' })),
    hashMode: t.Optional(t.Union([t.Boolean(), t.Integer()])),
    h: t.Optional(t.Union([t.Boolean(), t.Integer()])),
    v: t.Optional(t.Union([t.Integer(), t.String({ maxLength: 40 })])),
  },
  {
    additionalProperties: true,
    examples: [
      {
        name: 'pageview',
        url: 'https://example.com/pricing?utm_source=newsletter',
        domain: 'example.com',
        referrer: 'https://news.ycombinator.com/',
      },
      { name: 'Purchase', url: 'https://example.com/checkout', domain: 'example.com', props: { plan: 'pro' }, revenue: { currency: 'EUR', amount: 29.9 } },
    ],
  },
);
export type PlausibleEventBody = typeof PlausibleEventBody.static;
