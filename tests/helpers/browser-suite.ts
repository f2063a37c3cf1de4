import { afterAll, beforeAll } from 'bun:test';
import { HAS_CHROMIUM, launchChromium, type Chromium } from './chromium';
import { uniqueName } from './engine-dir';
import { eventually } from './eventually';
import { PageServer } from './page-server';
import { createWorkspace, listEvents, startTestService, type CreatedWorkspace, type TestService } from './test-service';

export type StoredEvent = Record<string, any>;

/** What a browser test file has: the service, a server for its pages (another origin), Chromium. */
export interface BrowserSuite {
  svc: TestService;
  pages: PageServer;
  chromium: Chromium;
  /** A workspace of its own for each test: fixed ids in the pages (`user-1`) then name only its events. */
  newWorkspace(): Promise<CreatedWorkspace>;
  /** Waits until the workspace's events satisfy `done` (events arrive from the browser on their own), and returns them. */
  awaitEvents(ws: CreatedWorkspace, what: string, done: (events: StoredEvent[]) => boolean): Promise<StoredEvent[]>;
}

/** Sets up a BrowserSuite before the file's tests and takes it down after them. */
export function browserSuite(): BrowserSuite {
  const suite = {} as BrowserSuite;
  const eventsOf = async (ws: CreatedWorkspace): Promise<StoredEvent[]> =>
    (await listEvents(suite.svc, 'orderByField=parsedAt&orderByDirection=asc', ws.privateApiKey)).body.results;
  beforeAll(async () => {
    suite.svc = await startTestService();
    suite.pages = new PageServer();
    // Where Chromium is missing the tests are skipped, with a message (chromium.ts).
    if (HAS_CHROMIUM) suite.chromium = await launchChromium();
  });
  afterAll(async () => {
    await suite.chromium?.close();
    suite.pages.stop();
    await suite.svc.stop();
  });
  suite.newWorkspace = () => createWorkspace(suite.svc, { name: uniqueName('browser') });
  suite.awaitEvents = async (ws, what, done) => {
    await eventually(what, async () => done(await eventsOf(ws)), 20_000);
    return eventsOf(ws);
  };
  return suite;
}
