import { describe, expect, test } from 'bun:test';
import { engineToIso, parseIsoDateTime, toEngineDateTime, toIsoString } from '../src/timestamps';

describe('timestamps', () => {
  const cases: Array<[string, string, string]> = [
    ['2024-05-01T12:00:00.123456+02:00', '2024-05-01T10:00:00.123456Z', '2024-05-01 10:00:00.123456'],
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z', '2024-05-01 10:00:00.000000'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z', '2024-05-01 00:00:00.000000'],
    ['1969-12-31T23:59:59.5Z', '1969-12-31T23:59:59.500Z', '1969-12-31 23:59:59.500000'],
    ['1905-03-01T23:59:59.999001Z', '1905-03-01T23:59:59.999001Z', '1905-03-01 23:59:59.999001'],
    ['1900-01-01T00:00:00Z', '1900-01-01T00:00:00.000Z', '1900-01-01 00:00:00.000000'],
    ['2299-12-31T23:59:59.999999Z', '2299-12-31T23:59:59.999999Z', '2299-12-31 23:59:59.999999'],
  ];
  for (const [input, iso, engine] of cases) {
    test(`${input} reads as ${iso} and writes to the engine as ${engine}, and back`, () => {
      const t = parseIsoDateTime(input)!;
      expect(toIsoString(t)).toBe(iso);
      expect(toEngineDateTime(t)).toBe(engine);
      expect(engineToIso(engine)).toBe(iso);
    });
  }

  test('consecutive microseconds in one second and across a second boundary', () => {
    const t = parseIsoDateTime('2024-05-01T10:00:00.999999Z')!;
    expect([toIsoString(t - 1n), toIsoString(t), toIsoString(t + 1n), toIsoString(t + 1001n)]).toEqual([
      '2024-05-01T10:00:00.999998Z',
      '2024-05-01T10:00:00.999999Z',
      '2024-05-01T10:00:01.000Z',
      '2024-05-01T10:00:01.001Z',
    ]);
  });

  test('random times of 1900 to 2299 write as Date writes their millisecond, with the microseconds when finer', () => {
    // A seeded generator (xorshift), so a failure repeats.
    let seed = 0x9e3779b9;
    const next = () => ((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5), (seed >>> 0) / 2 ** 32);
    const from = Date.UTC(1900, 0, 1) * 1000;
    const span = Date.UTC(2300, 0, 1) * 1000 - from;
    for (let i = 0; i < 20_000; i++) {
      const micros = Math.floor(from + next() * span);
      const t = BigInt(micros);
      const ms = Math.floor(micros / 1000);
      const sub = micros - ms * 1000;
      const iso = new Date(ms).toISOString();
      const expected = sub === 0 ? iso : `${iso.slice(0, -1)}${String(sub).padStart(3, '0')}Z`;
      expect(toIsoString(t)).toBe(expected);
      expect(toEngineDateTime(t)).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 23)}${String(sub).padStart(3, '0')}`);
      expect(parseIsoDateTime(expected)).toBe(t);
    }
  });

  test('impossible or out-of-range times are refused', () => {
    for (const text of ['2024-02-30', '2024-01-01T24:00:00Z', '1899-12-31T23:59:59Z', '2300-01-01', 'yesterday', '2024-01-01T10:00:00+25:00']) {
      expect(parseIsoDateTime(text)).toBeUndefined();
    }
  });
});
