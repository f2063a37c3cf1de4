import { afterAll, beforeAll, expect } from 'bun:test';
import { EmbeddedStorage } from '../../src/storage/embedded';
import type { Params, Sandbox, Storage } from '../../src/storage/storage';
import { describeInProcess, testInProcess } from '../helpers/deno-service';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * What reaches the engine: every statement the insights run is recorded on its way to a real
 * engine; markers put in every field a user names (events, properties, values, breakdowns,
 * time zones aside) must never appear in a statement's text, only among its bound parameters.
 */

const MARK = "z'q`\"x\\";
const issued: Array<{ sql: string; params?: Params }> = [];

/** The embedded engine, recording the statements of its sandboxes (where insights run). */
function recording(storage: EmbeddedStorage): Storage {
  return new Proxy(storage, {
    get(target, property, receiver) {
      if (property !== 'openSandbox') return Reflect.get(target, property, receiver);
      return (...args: Parameters<Storage['openSandbox']>): Sandbox => {
        const sandbox = target.openSandbox(...args);
        return {
          inspect: (database, sql, params) => (issued.push({ sql, params }), sandbox.inspect(database, sql, params)),
          run: (database, sql) => (issued.push({ sql }), sandbox.run(database, sql)),
          close: () => sandbox.close(),
        };
      };
    },
  });
}

const filters = [
  { property: `plan${MARK}`, operator: 'eq', value: `pro${MARK}` },
  { property: `nested${MARK}.key${MARK}`, source: 'person', operator: 'in', value: [`a${MARK}`, 1] },
  { property: `group${MARK}`, source: 'group', operator: 'contains', value: MARK },
  { property: `amount${MARK}`, operator: 'gt', value: 5 },
  // A regular expression of the marker without its backslash, which would end it badly.
  { property: `x${MARK}`, operator: 'regex', value: "^z'q`" },
];
const step = { event: `purchase${MARK}`, filters };
const breakdown = { property: `plan${MARK}`, limit: 3 };

const REQUESTS: Array<[string, unknown]> = [
  ['trends', { series: [{ event: `signup${MARK}`, math: 'sum', property: `amount${MARK}`, filters }, { event: '$any', math: 'wau' }], filters, breakdown, compare: true, formula: 'A + B' }],
  ['funnels', { steps: [step, { event: `signup${MARK}` }], exclusions: [{ event: `refund${MARK}`, fromStep: 0, toStep: 1 }], filters, breakdown }],
  ['retention', { startEvent: step, returnEvent: { event: `return${MARK}`, filters }, filters, breakdown }],
  ['paths', { start: `/pricing${MARK}`, include: [`/pricing${MARK}`, `buy${MARK}`], exclude: [`x${MARK}`], filters }],
  ['stickiness', { series: [{ event: `signup${MARK}`, filters }], filters }],
  ['lifecycle', { series: [{ event: `signup${MARK}`, filters }], filters }],
];

describeInProcess('the statements insights send to the engine', () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService({}, recording(new EmbeddedStorage(ENGINE_DIR, 2)));
    const workspace = await createWorkspace(svc, { name: uniqueName('bound') });
    key = workspace.privateApiKey;
    await sendEvents(svc, [{ type: 'track', event: `signup${MARK}`, userId: MARK, properties: { [`plan${MARK}`]: `pro${MARK}` } }], workspace.publicApiKey);
  });
  afterAll(() => svc.stop());

  for (const [kind, body] of REQUESTS) {
    testInProcess(`${kind}: every user value is a bound parameter`, async () => {
      issued.length = 0;
      const res = await svc.request('POST', `/insights/${kind}`, { key, body });
      expect({ status: res.status, body: res.status === 200 ? 'ok' : await res.json() }).toEqual({ status: 200, body: 'ok' });
      const statements = issued.filter((s) => s.sql.includes('events_with_persons'));
      expect(statements.length).toBeGreaterThan(0);
      for (const { sql, params } of statements) {
        expect(sql).not.toContain('z\'q');
        expect(sql).not.toContain('z\\\'q');
        expect(Object.values(params ?? {}).some((v) => (typeof v === 'string' ? v : JSON.stringify(v)).includes("z'q"))).toBe(true);
      }
    });
  }
});
