import type { TSchema } from '@sinclair/typebox';
import type { ActorsStatement } from './actors';
import type { CompileContext } from './compile-context';
import { funnelsActors } from './funnels';
import { lifecycleActors } from './lifecycle';
import { FunnelsActorsQuery, LifecycleActorsQuery, RetentionActorsQuery, StickinessActorsQuery, TrendsActorsQuery } from './model';
import { retentionActors } from './retention';
import { stickinessActors } from './stickiness';
import { trendsActors } from './trends';

/** The insights whose points are actors: each is `POST /insights/<kind>/persons`. */
export const ACTOR_KINDS = ['trends', 'funnels', 'retention', 'stickiness', 'lifecycle'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

interface ActorsOfKind {
  /** The request: `query` (the insight's request), the point's selector, `limit` and `offset`. */
  schema: TSchema;
  select(body: never, context: CompileContext): ActorsStatement;
}

export const ACTORS: Record<ActorKind, ActorsOfKind> = {
  trends: { schema: TrendsActorsQuery, select: trendsActors },
  funnels: { schema: FunnelsActorsQuery, select: funnelsActors },
  retention: { schema: RetentionActorsQuery, select: retentionActors },
  stickiness: { schema: StickinessActorsQuery, select: stickinessActors },
  lifecycle: { schema: LifecycleActorsQuery, select: lifecycleActors },
};
