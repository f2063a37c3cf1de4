/** Segment's names for the UTM parameters, in `context.campaign`. */
const CAMPAIGN: Record<string, string> = { utm_campaign: 'name', utm_source: 'source', utm_medium: 'medium', utm_term: 'term', utm_content: 'content' };

export type Props = Record<string, unknown>;

/** The page as Segment's `page` call describes it (its properties, and `context.page`). */
export function pageFacts(referrer: string): Props {
  return { path: location.pathname, url: location.href, title: document.title, referrer, search: location.search };
}

/** `context` of every call: the page, the campaign, the screen, the locale and the browser. */
export function callContext(page: Props): Props {
  const campaign: Props = {};
  new URLSearchParams(location.search).forEach((value, name) => {
    const field = CAMPAIGN[name];
    if (field) campaign[field] = value;
  });
  return {
    page,
    ...(Object.keys(campaign).length > 0 ? { campaign } : {}),
    screen: { width: screen.width, height: screen.height, density: devicePixelRatio },
    locale: navigator.language,
    userAgent: navigator.userAgent,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    library: { name: 'event-analytics-tracker', version: '1' },
  };
}
