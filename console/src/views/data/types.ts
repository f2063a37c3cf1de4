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
