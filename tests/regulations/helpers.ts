import { eventually } from '../helpers/eventually';
import type { TestService } from '../helpers/test-service';

/** POST /regulations with `key`; fails the test unless it answers 202, and answers the id. */
export async function regulate(svc: Pick<TestService, 'request'>, key: string, regulationType: string, subjectType: string, subjectIds: string[]): Promise<string> {
  const res = await svc.request('POST', '/regulations', { key, body: { regulationType, subjectType, subjectIds } });
  if (res.status !== 202) throw new Error(`POST /regulations answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Waits until the regulation is finished (or failed), and answers it. */
export async function settledRegulation(svc: Pick<TestService, 'request'>, key: string, id: string, limitMs = 60_000): Promise<any> {
  let regulation: any;
  await eventually(
    `regulation ${id} finishes`,
    async () => {
      regulation = await (await svc.request('GET', `/regulations/${id}`, { key })).json();
      return regulation.status === 'finished' || regulation.status === 'failed';
    },
    limitMs,
  );
  return regulation;
}
