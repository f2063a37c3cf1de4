import type { Settings } from './settings';

/**
 * Whether this page view may be sent: not when the page honours Do Not Track or Global Privacy
 * Control and the visitor set either, and not from an automated browser (a crawler, a test run)
 * unless the page allows it.
 */
export function maySend(settings: Settings): boolean {
  const nav = navigator as Navigator & { globalPrivacyControl?: boolean };
  if (settings.respectDnt && (nav.doNotTrack === '1' || nav.globalPrivacyControl === true)) return false;
  return settings.allowAutomation || !nav.webdriver;
}
