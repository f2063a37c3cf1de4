/** The catalog's answers (docs/api/catalog.md). */
export interface ObservedType {
  type: string;
  count: number;
}

export interface CuratedFields {
  description: string;
  tags: string[];
  owner: string;
  verified: boolean;
  hidden: boolean;
}

export interface CatalogEvent extends CuratedFields {
  name: string;
  displayName?: string | null;
  types: ObservedType[];
  volume: number;
  firstSeen: string;
  lastSeen: string;
  examples: string[];
  libraries: string[];
}

export interface CatalogProperty extends CatalogEvent {
  source: 'properties' | 'traits' | 'context';
  events: string[];
}

export type CatalogItem = CatalogEvent | CatalogProperty;

export const isProperty = (item: CatalogItem): item is CatalogProperty => 'source' in item;

/** `GET /tracking-plan` (docs/api/tracking-plan.md): the plan in the native format. */
export interface NativePlan {
  events: Record<string, JsonSchema>;
  identify?: JsonSchema;
  group?: JsonSchema;
}

export type JsonSchema = Record<string, unknown>;

export type PlanMode = 'record' | 'drop' | 'quarantine';

export interface TrackingPlan {
  format: 'native';
  plan: NativePlan;
  mode: PlanMode;
  version: number;
  /** PUT only: the rules of the plan sent that are not enforced (page and screen calls, …), by JSON Pointer. */
  ignored?: string[];
}

/** A kind of violation summed over the range asked (`GET /violations`). */
export interface ViolationCount {
  event: string;
  path: string;
  kind: string;
  expected: string;
  actual: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
}

export interface Violation {
  event: string;
  path: string;
  kind: string;
  expected: string;
  actual: string;
}

/** An event the plan keeps apart (`GET /quarantine`). */
export interface QuarantinedEvent {
  event: { uuid: string; type: string; event?: string; timestamp?: string; properties?: Record<string, unknown>; traits?: Record<string, unknown> };
  violations: Violation[];
  planVersion: number;
  quarantinedAt: string;
}
