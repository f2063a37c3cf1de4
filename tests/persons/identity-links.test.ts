import { describe, expect, test } from 'bun:test';
import { acceptEvent } from '../../src/events/event-rows';
import { silentLogger } from '../../src/log';
import { IdentityLinks } from '../../src/persons/identity-links';
import { parseIsoDateTime } from '../../src/timestamps';
import { RecordingStorage } from '../helpers/recording-storage';

/** Keeps the rows of `person_links` the rounds store, as objects. */
class LinkRows extends RecordingStorage {
  readonly rows: Array<{ id: string; userId: string; linkedAt: string }> = [];
  override async insert(database: string, table: string, lines: readonly string[]): Promise<void> {
    if (table === 'person_links') for (const line of lines) this.rows.push(JSON.parse(line));
    await super.insert(database, table, lines);
  }
}

const DB = 'ws';
const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 12, minute)).toISOString();
/** An event carrying both ids, as signed-in traffic sends them. */
const linking = (anonymousId: string, userId: string, minute: number) =>
  acceptEvent({ type: 'track', event: 'x', anonymousId, userId, timestamp: at(minute) }, parseIsoDateTime(at(minute))!, DB);

/** Links as `loaded` would be told of them, submitted one request after another and then inserted in that order. */
async function submitAndLoad(links: IdentityLinks, ...requests: ReturnType<typeof linking>[][]) {
  const handed = requests.map((events) => links.linksOf(DB, events));
  for (const l of handed) links.loaded(DB, l);
  await links.settled(DB);
  return handed.map((l) => l.map((link) => `${link.id}→${link.userId}`));
}

describe('identity links taken at submission', () => {
  test('a repeat of a resolved link is left out, and a link of another userId is not', async () => {
    const storage = new LinkRows();
    const links = new IdentityLinks(storage, false, silentLogger);
    expect(await submitAndLoad(links, [linking('b1', 'alice', 1)])).toEqual([['b1→alice']]);
    expect(await submitAndLoad(links, [linking('b1', 'alice', 2), linking('b1', 'bob', 3)])).toEqual([['b1→bob']]);
    expect(storage.rows.map((r) => `${r.id}→${r.userId}`)).toEqual(['b1→alice', 'b1→bob']);
  });

  test("while an id's changed link waits for its insert, a repeat of its earlier link is handed over too, and the latest wins", async () => {
    const storage = new LinkRows();
    const links = new IdentityLinks(storage, false, silentLogger);
    await submitAndLoad(links, [linking('b2', 'alice', 1)]);
    // A shared browser: Bob signs in, then Alice again, in two requests logged before either is inserted.
    expect(await submitAndLoad(links, [linking('b2', 'bob', 2)], [linking('b2', 'alice', 3)])).toEqual([['b2→bob'], ['b2→alice']]);
    expect(storage.rows.at(-1)).toMatchObject({ id: 'b2', userId: 'alice', linkedAt: '2026-11-20 12:03:00.000000' });
    // Once both are loaded, repeats are left out again; within one request as well as across requests.
    expect(await submitAndLoad(links, [linking('b2', 'alice', 4)])).toEqual([[]]);
    expect(await submitAndLoad(links, [linking('b2', 'bob', 5), linking('b2', 'alice', 6)])).toEqual([['b2→bob', 'b2→alice']]);
    expect(storage.rows.at(-1)).toMatchObject({ id: 'b2', userId: 'alice', linkedAt: '2026-11-20 12:06:00.000000' });
  });

  test('forgetting a database hands its links over again', async () => {
    const links = new IdentityLinks(new LinkRows(), false, silentLogger);
    await submitAndLoad(links, [linking('b3', 'carol', 1)]);
    links.forgetDatabase(DB);
    expect(await submitAndLoad(links, [linking('b3', 'carol', 2)])).toEqual([['b3→carol']]);
  });
});
