import { HttpProblem, type ProblemError } from '../http/problem';

/** The problem type of a Plausible event the service cannot record (docs/api/plausible.md). */
export const INVALID_PLAUSIBLE_EVENT = 'urn:event-analytics:problem:invalid-plausible-event';

/** 400 for a Plausible event that lacks a field Plausible requires, or whose url is no http(s) URL. */
export class InvalidPlausibleEvent extends Error {
  override readonly name = 'InvalidPlausibleEvent';
  constructor(readonly errors: ProblemError[]) {
    super(`${errors.length} problem${errors.length === 1 ? '' : 's'} in the event; nothing was recorded`);
  }

  toProblem(): HttpProblem {
    return new HttpProblem(400, 'Invalid Plausible event', this.message, { type: INVALID_PLAUSIBLE_EVENT, errors: this.errors });
  }
}
