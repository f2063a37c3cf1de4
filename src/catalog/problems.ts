import { HttpProblem } from '../http/problem';

/** The problem type of a curated change to an event or property the workspace has never received (docs/api/catalog.md). */
export const UNKNOWN_CATALOG_ENTRY = 'urn:event-analytics:problem:unknown-catalog-entry';

/** 404 for a PATCH of an event or property the catalog has not observed: curation follows what was received. */
export class UnknownCatalogEntry extends Error {
  override readonly name = 'UnknownCatalogEntry';

  toProblem(): HttpProblem {
    return new HttpProblem(404, 'Unknown catalog entry', this.message, { type: UNKNOWN_CATALOG_ENTRY });
  }
}
