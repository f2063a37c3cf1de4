import type { Workspace } from '../workspaces/model';

/** The insights there are: each is `POST /insights/<kind>`, and a saved insight may be any of them or SQL. */
export const INSIGHT_KINDS = ['trends', 'funnels', 'retention', 'paths', 'stickiness', 'lifecycle'] as const;
export type InsightKind = (typeof INSIGHT_KINDS)[number];

/**
 * Answers an insight's request body for a workspace, exactly as `POST /insights/<kind>` does.
 * A body its kind does not take is refused with 400, each problem's pointer under `pointer` (for
 * example `/tiles/2/query` when a dashboard tile's saved query is answered).
 */
export interface InsightAnswerer {
  answer(workspace: Workspace, kind: InsightKind, query: unknown, pointer: string): Promise<unknown>;
}
