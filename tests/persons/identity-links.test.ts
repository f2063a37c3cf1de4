import { describe, expect, test } from 'bun:test';
import { acceptEvent } from '../../src/events/event-rows';
import { silentLogger } from '../../src/log';
import { IdentityLinks } from '../../src/persons/identity-links';
import { parseIsoDateTime } from '../../src/timestamps';
import { RecordingStorage } from '../helpers/recording-storage';

/** Keeps the rows of `person_first_links` the rounds store, as objects. */
class LinkRows extends RecordingStorage {
  readonly rows: Array<{ id: string; userId: string; linkedAt: string }> = [];
  override async insert(database: string, table: string, lines: readonly string[]): Promise<void> {
    if (table === 'person_first_links') {
      for (const line of lines) {
        const { id, first } = JSON.parse(line);
        this.rows.push({ id, userId: first.userId, linkedAt: first.linkedAt });
      }
    }
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
  test('a repeat of the first link is left out; a later link of another userId is not stored, an earlier one is', async () => {
    const storage = new LinkRows();
    const links = new IdentityLinks(storage, false, silentLogger);
    expect(await submitAndLoad(links, [linking('b1', 'alice', 1)])).toEqual([['b1→alice']]);
    expect(await submitAndLoad(links, [linking('b1', 'alice', 2), linking('b1', 'bob', 3)])).toEqual([['b1→bob']]);
    expect(storage.rows.map((r) => `${r.id}→${r.userId}`)).toEqual(['b1→alice']);
    // Sent late, made earlier (an import of older events): the first link now.
    expect(await submitAndLoad(links, [linking('b1', 'carol', 0)])).toEqual([['b1→carol']]);
    expect(storage.rows.map((r) => `${r.id}→${r.userId}`)).toEqual(['b1→alice', 'b1→carol']);
  });

  test("while an id's link waits for its insert, its repeats are handed over too, and the first by time is stored", async () => {
    const storage = new LinkRows();
    const links = new IdentityLinks(storage, false, silentLogger);
    await submitAndLoad(links, [linking('b2', 'alice', 5)]);
    // A shared browser: Bob's link made before Alice's arrives late, then Alice's again, in two requests logged before either is inserted.
    expect(await submitAndLoad(links, [linking('b2', 'bob', 2)], [linking('b2', 'alice', 6)])).toEqual([['b2→bob'], ['b2→alice']]);
    expect(storage.rows.at(-1)).toMatchObject({ id: 'b2', userId: 'bob', linkedAt: '2026-11-20 12:02:00.000000' });
    // Once both are loaded, repeats of the first are left out again.
    expect(await submitAndLoad(links, [linking('b2', 'bob', 7)])).toEqual([[]]);
    expect(storage.rows).toHaveLength(2);
  });

  test('forgetting a database hands its links over again', async () => {
    const links = new IdentityLinks(new LinkRows(), false, silentLogger);
    await submitAndLoad(links, [linking('b3', 'carol', 1)]);
    links.forgetDatabase(DB);
    expect(await submitAndLoad(links, [linking('b3', 'carol', 2)])).toEqual([['b3→carol']]);
  });
});
