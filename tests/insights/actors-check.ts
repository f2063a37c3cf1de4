import { expect } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { ActorsAnswer } from '../../src/insights/model';
import type { serviceWith } from './event-log';

type Service = Awaited<ReturnType<typeof serviceWith>>;

/**
 * Asks for the actors behind a point (all of them: fewer than a page) and checks the answer's
 * shape: each actor once, ordered by id, `total` as many as them (or, where the point counts
 * events, `countsEvents`, the sum of their event counts). Answers their ids and event counts.
 */
export async function actorsBehind(service: Service, kind: string, selector: Record<string, unknown>, countsEvents = false): Promise<{ ids: string[]; total: number; events: number }> {
  const { status, body } = await service.actors(kind, { ...selector, limit: 1000 });
  expect({ status, body: status === 200 ? 'ok' : body }).toEqual({ status: 200, body: 'ok' });
  expect(Value.Check(ActorsAnswer, body)).toBe(true);
  const ids: string[] = body.results.map((r: { personId?: string; groupId?: string }) => r.personId ?? r.groupId);
  expect(ids).toEqual([...new Set(ids)].sort());
  const events = body.results.reduce((sum: number, r: { eventCount?: number }) => sum + (r.eventCount ?? 0), 0);
  expect(body.total).toBe(countsEvents ? events : ids.length);
  expect(body.next).toBeUndefined();
  return { ids, total: body.total, events };
}
