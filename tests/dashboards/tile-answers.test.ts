import { describe, expect, test } from 'bun:test';
import { withDashboardRange } from '../../src/dashboards/tile-answers';

describe("a dashboard's date range over a tile's query", () => {
  const trends = { series: [{ event: 'signup' }], dateFrom: '2026-01-01', dateTo: '2026-01-31', interval: 'week', timezone: 'Europe/Paris' };
  const retention = { startEvent: { event: 'signup' }, returnEvent: { event: '$any' }, dateTo: '2026-01-31' };

  test('without a dateFrom, the tile keeps its own', () => {
    expect(withDashboardRange('trends', trends, {})).toBe(trends);
  });

  test('with one, both ends are replaced; the end runs to now when the dashboard has none', () => {
    expect(withDashboardRange('trends', trends, { dateFrom: '-30d', dateTo: '-1d' })).toEqual({ ...trends, dateFrom: '-30d', dateTo: '-1d' });
    expect(withDashboardRange('trends', trends, { dateFrom: '-30d' })).toEqual({ series: trends.series, dateFrom: '-30d', interval: 'week', timezone: 'Europe/Paris' });
  });

  test('a kind takes only the fields it has: retention its end', () => {
    expect(withDashboardRange('retention', retention, { dateFrom: '-30d', dateTo: '-1d' })).toEqual({ ...retention, dateTo: '-1d' });
    expect(withDashboardRange('retention', retention, { dateFrom: '-30d' })).toEqual({ startEvent: retention.startEvent, returnEvent: retention.returnEvent });
  });

  test('the saved query is not changed', () => {
    const saved = structuredClone(trends);
    withDashboardRange('trends', saved, { dateFrom: '-30d' });
    expect(saved).toEqual(trends);
  });
});
