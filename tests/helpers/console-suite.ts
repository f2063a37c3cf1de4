import { afterAll, beforeAll } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { launchChromium, type Chromium } from './chromium';
import { consoleMoves, signedInConsole, type PageFaults } from './console-page';
import { sendEvents, startTestService, type TestService } from './test-service';

declare const document: any;

/** What a console browser test file has: the service with its events, Chromium, a signed-in page. */
export interface ConsoleSuite {
  svc: TestService;
  chromium: Chromium;
  page: Page;
  faults: PageFaults;
}

/**
 * Before the file's tests: a service given `events` (a function, so that times are taken when the
 * file runs), Chromium and a signed-in offline page at 1440x900; all taken down after them.
 */
export function consoleSuite(events: () => unknown[]): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  beforeAll(async () => {
    suite.svc = await startTestService();
    await sendEvents(suite.svc, events());
    suite.chromium = await launchChromium();
    ({ page: suite.page, faults: suite.faults } = await signedInConsole(suite.chromium, suite.svc.url, suite.svc.privateKey));
    await suite.page.setViewport({ width: 1440, height: 900 });
  });
  afterAll(async () => {
    await suite.chromium?.close();
    await suite.svc?.stop();
  });
  return suite;
}

/** Screenshots `<name>` (light) and `<name>-dark` of the screen as it is, nothing focused. */
export async function lightAndDark(page: Page, name: string): Promise<void> {
  await page.evaluate(() => document.activeElement?.blur());
  await consoleMoves(page).shot(name);
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await Bun.sleep(150);
  await consoleMoves(page).shot(`${name}-dark`);
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
}
