/** What the page asks of the tracker, through attributes of its script tag. */
export interface Settings {
  /** The public key (`data-key`). */
  key: string;
  /** Where calls are sent: `data-api`, or the service's collection path next to the script. */
  endpoint: string;
  /** The global the page calls (`data-global`, default `ea`): `ea.track(...)`. */
  global: string;
  /** `data-cookieless`: nothing is kept on the device; the anonymousId lives as long as the page. */
  cookieless: boolean;
  /** `data-respect-dnt`: send nothing when Do Not Track or Global Privacy Control is on. */
  respectDnt: boolean;
  /** `data-allow-automation`: send from automated browsers too (navigator.webdriver). */
  allowAutomation: boolean;
  /** `data-track-links`: outbound link clicks and file downloads as track events. */
  trackLinks: boolean;
}

/**
 * The service replaces this placeholder with its collection path (TRACKER_COLLECT_PATH) when it
 * serves the script, so a renamed path needs no attribute.
 */
const COLLECT_PATH = '__COLLECT_PATH__';

/** The settings of `script`, the tracker's own tag. */
export function readSettings(script: HTMLScriptElement): Settings {
  const flag = (name: string) => script.hasAttribute(`data-${name}`);
  return {
    key: script.dataset.key || '',
    endpoint: script.dataset.api || new URL(COLLECT_PATH, script.src).href,
    global: script.dataset.global || 'ea',
    cookieless: flag('cookieless'),
    respectDnt: flag('respect-dnt'),
    allowAutomation: flag('allow-automation'),
    trackLinks: flag('track-links'),
  };
}
