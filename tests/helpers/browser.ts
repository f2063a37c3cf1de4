import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterRun } from './after-run';

/** Debian's Chromium; the browser tests skip, saying so, where it is not installed. */
export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Flags for a quiet, reproducible headless run that reaches nothing by itself. */
const FLAGS = [
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--hide-scrollbars',
];

/** What a page did that it should not: requests to other hosts, errors, CSP violations. */
export interface PageFaults {
  /** URLs the page asked for on hosts other than the service (each was failed). */
  blocked: string[];
  errors: string[];
}

/** Chromium with a fresh profile, removed when the tests end. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  afterRun(() => rmSync(profile, { recursive: true, force: true }));
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, userDataDir: profile, args: FLAGS, defaultViewport: { width: 1280, height: 800 } });
}

/**
 * A page whose network is cut off from everything but `origin` (the service): any other request
 * is failed and recorded, as on a host without internet access. Page errors, console errors and
 * Content-Security-Policy violations are recorded too.
 */
export async function offlinePage(browser: Browser, origin: string): Promise<{ page: Page; faults: PageFaults }> {
  const page = await browser.newPage();
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
    // A failed request to the service (a 401 the console expects, say) is logged by Chromium too; those are the test's to check.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) faults.errors.push(`console: ${message.text()}`);
  });
  // Runs in the page (this file is type-checked without the DOM library, hence the text).
  await page.evaluateOnNewDocument(
    "document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))",
  );
  return { page, faults };
}
