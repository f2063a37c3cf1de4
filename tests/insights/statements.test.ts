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

/** The persons behind a point of each kind that has them, of the requests above. */
const SELECTORS: Record<string, Record<string, unknown>> = {
  trends: { series: 0, label: '2020-01-01', breakdownValue: `pro${MARK}` },
  funnels: { step: 1, breakdownValue: `pro${MARK}` },
  retention: { cohort: '2020-01-01', period: 0, breakdownValue: `pro${MARK}` },
  stickiness: { series: 0, count: 1 },
  lifecycle: { label: '2020-01-01', status: 'new' },
};

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

  const persons = REQUESTS.filter(([kind]) => kind in SELECTORS).map(([kind, body]): [string, string, unknown] => {
    // A formula has no persons behind its points; a dated range makes the selector's label one of its periods.
    const { formula, ...query } = body as Record<string, unknown>;
    const dated = kind === 'retention' ? { dateTo: '2020-01-01', periods: 1 } : { dateFrom: '2020-01-01', dateTo: '2020-01-01' };
    return [`${kind} persons`, `/insights/${kind}/persons`, { query: { ...query, ...dated }, ...SELECTORS[kind] }];
  });
  for (const [name, path, body] of [...REQUESTS.map(([kind, body]): [string, string, unknown] => [kind, `/insights/${kind}`, body]), ...persons]) {
    testInProcess(`${name}: every user value is a bound parameter`, async () => {
      issued.length = 0;
      const res = await svc.request('POST', path, { key, body });
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
