import { expect, test } from 'bun:test';
import { Countries } from '../../src/web-analytics/countries';

// Look-ups remember a /24 network's country only when the database holds the network whole.

test('addresses of a network the database splits finer than /24 each get their own country, in either order', () => {
  // 91.92.108.0/25 is BG and 91.92.108.255 CY in the shipped database (DB-IP, CC BY 4.0).
  const forward = new Countries();
  expect([forward.of('91.92.108.1'), forward.of('91.92.108.255')]).toEqual(['BG', 'CY']);
  const backward = new Countries();
  expect([backward.of('91.92.108.255'), backward.of('91.92.108.1')]).toEqual(['CY', 'BG']);
});

test('addresses of a network held whole share its country; private and unknown ones have none, also when looked up again', () => {
  const countries = new Countries();
  expect(['8.8.8.8', '8.8.8.4', '8.8.8.8', '10.0.0.1', '10.0.0.2', '::ffff:8.8.8.8'].map((a) => countries.of(a))).toEqual(['US', 'US', 'US', undefined, undefined, 'US']);
});
