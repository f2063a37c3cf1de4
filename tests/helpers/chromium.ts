import { describe } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium package: the only browser these tests use (nothing is downloaded). */
const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

/** A describe block that runs in Chromium, skipped (with the message above) where it is not installed. */
export const describeInChromium = describe.skipIf(!HAS_CHROMIUM);

/**
 * Headless, no sandbox (tests run as root), no GPU, no QUIC, none of the browser's own traffic
 * (updates, sync, safe browsing), and every host name but loopback unresolvable, so a page that
 * tried to load anything from the internet (an SDK's CDN, say) fails instead of reaching it.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];

export interface Chromium {
  browser: Browser;
  /** A new page in a browser context of its own (its own storage), whose every request is recorded in `requests` (URLs). */
  newPage(): Promise<{ page: Page; requests: string[] }>;
  close(): Promise<void>;
}

/**
 * Chromium with a fresh profile, removed on close. `doNotTrack` sets the browser's own
 * "Send a Do Not Track request" preference, which navigator.doNotTrack reports.
 */
export async function launchChromium(options: { doNotTrack?: boolean } = {}): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  if (options.doNotTrack) {
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify({ enable_do_not_track: true }));
  }
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, userDataDir: profile, args: FLAGS });
  return {
    browser,
    async newPage() {
      const page = await (await browser.createBrowserContext()).newPage();
      const requests: string[] = [];
      page.on('request', (request) => void requests.push(request.url()));
      return { page, requests };
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Requests that left loopback: none may, as nothing a page here needs lives anywhere else. */
export const offLoopback = (requests: readonly string[]) =>
  requests.filter((url) => {
    const { protocol, hostname } = new URL(url);
    return !['data:', 'blob:', 'about:'].includes(protocol) && hostname !== '127.0.0.1' && hostname !== 'localhost';
  });
