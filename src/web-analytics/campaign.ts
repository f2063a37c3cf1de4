/** Segment's `context.campaign`, from a page URL's utm_* parameters. */
export interface Campaign {
  source?: string;
  medium?: string;
  name?: string;
  term?: string;
  content?: string;
}

const UTM: ReadonlyArray<readonly [string, keyof Campaign]> = [
  ['utm_source', 'source'],
  ['utm_medium', 'medium'],
  ['utm_campaign', 'name'],
  ['utm_term', 'term'],
  ['utm_content', 'content'],
];

/** The campaign of a page's URL, or undefined when it has no non-empty utm_* parameter (or is no URL). */
export function campaignOf(url: URL | undefined): Campaign | undefined {
  if (!url || !url.search.includes('utm_')) return undefined;
  let campaign: Campaign | undefined;
  for (const [parameter, key] of UTM) {
    const value = url.searchParams.get(parameter);
    if (value) (campaign ??= {})[key] = value;
  }
  return campaign;
}
