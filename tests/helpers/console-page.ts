import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import type { Chromium } from './chromium';
import { PROJECT_ROOT } from './project-root';

/**
 * What the console's browser tests share: a page cut off from every host but the service, that
 * records what it should not do, and the few moves every test makes (sign in, open a page,
 * press a button, wait for a text). The functions passed to page.evaluate run in the page.
 */
declare const document: any;
declare const location: { hash: string };

/** Where screenshots go: docs/screenshots/ with CONSOLE_SCREENSHOTS=1, a temporary folder otherwise. */
export const SHOTS = process.env.CONSOLE_SCREENSHOTS ? join(PROJECT_ROOT, 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'console-shots-'));

/** What a page did that it should not: requests to other hosts, errors, CSP violations. */
export interface PageFaults {
  /** URLs asked for on hosts other than the service (each was failed). */
  blocked: string[];
  errors: string[];
}

/**
 * A page whose network is cut off from everything but `origin` (the service): any other request
 * is failed with "internet disconnected" and recorded. Page errors, console errors and
 * Content-Security-Policy violations are recorded too.
 */
export async function offlinePage(chromium: Chromium, origin: string): Promise<{ page: Page; faults: PageFaults }> {
  const { page } = await chromium.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const faults: PageFaults = { blocked: [], errors: [] };
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return void request.continue();
    faults.blocked.push(url);
    void request.abort('internetdisconnected');
  });
  page.on('pageerror', (err) => faults.errors.push(`page error: ${(err as Error).message}`));
  page.on('console', (message) => {
    // Chromium logs each answer >= 400 (a 401 the test provokes, say); those are the test's to check.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) faults.errors.push(`console: ${message.text()}`);
  });
  // Runs in the page, as text: this file is type-checked without the DOM library.
  await page.evaluateOnNewDocument(
    "document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))",
  );
  return { page, faults };
}

/** An offline page (above) of the console at `origin`, signed in with `key`, on its first page (live events). */
export async function signedInConsole(chromium: Chromium, origin: string, key: string): Promise<{ page: Page; faults: PageFaults }> {
  const { page, faults } = await offlinePage(chromium, origin);
  await page.goto(`${origin}/console`);
  await consoleMoves(page).signInWith(key);
  await page.waitForSelector('.status-live');
  return { page, faults };
}

/** The moves of a test on one console page. */
export function consoleMoves(page: Page) {
  const waitForText = (selector: string, text: string, timeout = 10_000) =>
    page.waitForFunction((s: string, t: string) => [...document.querySelectorAll(s)].some((e: any) => e.textContent?.includes(t)), { timeout }, selector, text);
  /** Clicks the button whose text starts with `label`, within `scope` (a selector). */
  const press = async (label: string, scope = 'body') => {
    const handle = await page.waitForFunction(
      (s: string, l: string) => [...document.querySelectorAll(`${s} button`)].find((b: any) => b.textContent?.trim().startsWith(l) && !b.disabled),
      {},
      scope,
      label,
    );
    await (handle as unknown as { click(): Promise<void> }).click();
  };
  /** Opens a page of the console by its address (`persons`, `dashboards/<id>`). */
  const go = async (hash: string) => {
    await page.evaluate((v: string) => (location.hash = `#/${v}`), hash);
    await page.waitForSelector(`a.nav-link.active[data-path="${hash.split(/[/?]/)[0]}"]`);
  };
  const signInWith = async (key: string) => {
    await page.waitForSelector('#key');
    await page.$eval('#key', (input) => ((input as unknown as { value: string }).value = ''));
    await page.type('#key', key);
    await press('Sign in');
  };
  const shot = async (name: string) => {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`) as `${string}.png` });
  };
  return { waitForText, press, go, signInWith, shot };
}
