/**
 * First touch: person properties from each person's first event, named as PostHog names them
 * (CONTRACT.md section 13). The columns of the `person_first_touch` view, beside `personId`.
 */
export const FIRST_TOUCH_VIEW = 'person_first_touch';

export const FIRST_TOUCH_NAMES = [
  '$initial_referrer',
  '$initial_referring_domain',
  '$initial_source',
  '$initial_utm_source',
  '$initial_utm_medium',
  '$initial_utm_campaign',
  '$initial_pathname',
  '$initial_country',
  '$initial_browser',
  '$initial_os',
  '$initial_device',
] as const;

export type FirstTouchName = (typeof FIRST_TOUCH_NAMES)[number];

const NAMES: ReadonlySet<string> = new Set(FIRST_TOUCH_NAMES);
export const isFirstTouch = (property: string): property is FirstTouchName => NAMES.has(property);
