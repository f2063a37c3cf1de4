import type { Page } from 'puppeteer-core';

declare const document: any;

/** Waits of the console's overview screen (console/src/views/overview), shared by its browser tests. */
export function overviewWaits(page: Page) {
  return {
    /** Until the screen has drawn the numbers for these filters (`visit:country=DE`). */
    loaded: (filters = '') => page.waitForFunction((f: string) => document.querySelector('.overview')?.dataset.loaded?.endsWith(`/${f}`) && document.querySelector('.ov-number'), { timeout: 20_000 }, filters),
    /** Until nothing on the screen is still being asked (numbers, chart, panels). */
    settled: async () => {
      await page.waitForFunction(() => !document.querySelector('.overview[aria-busy], .overview [aria-busy]') && document.querySelector('.ov-chart canvas'), { timeout: 20_000 });
      // The mouse off the numbers and rows, so a screenshot shows no hover.
      await page.mouse.move(1, 1);
    },
  };
}
