import { invalidInput, type ProblemError } from '../http/problem';
import { ANY_EVENT } from './compile-context';
import { longestWindow, MAX_WINDOW_DAYS } from './funnel-window';
import type { FunnelsQuery } from './model';

/**
 * What a funnel request must hold beyond its schema, each problem reported at its pointer (under
 * `pointer`, where the request is): an exclusion spans steps of the funnel (from a step to a later
 * one, numbered from 0), and excludes an event that is none of the steps it spans (such an
 * exclusion would cut every conversion, as PostHog refuses it too); the window is at most
 * MAX_WINDOW_DAYS long; the fields of a view (`funnelVizType`) come with it, and its steps are
 * steps of the funnel, the first before the last.
 */
export function checkFunnel(query: FunnelsQuery, pointer: string): void {
  const errors: ProblemError[] = [];
  const last = query.steps.length - 1;
  if (query.window && query.window.value > longestWindow(query.window.unit)) {
    errors.push({ pointer: `${pointer}/window/value`, detail: `at most ${longestWindow(query.window.unit)} ${query.window.unit}s: a window is at most ${MAX_WINDOW_DAYS} days` });
  }
  (query.exclusions ?? []).forEach((exclusion, i) => {
    const at = `${pointer}/exclusions/${i}`;
    if (exclusion.toStep <= exclusion.fromStep) errors.push({ pointer: `${at}/toStep`, detail: 'must be a later step than fromStep' });
    if (exclusion.toStep > last) errors.push({ pointer: `${at}/toStep`, detail: `must be a step of the funnel: 0 to ${last}` });
    if (exclusion.event === ANY_EVENT) errors.push({ pointer: `${at}/event`, detail: `${ANY_EVENT} cannot be excluded: it would exclude every step` });
    else if (query.steps.slice(exclusion.fromStep, exclusion.toStep + 1).some((step) => step.event === exclusion.event)) {
      errors.push({ pointer: `${at}/event`, detail: 'must not be the event of a step between fromStep and toStep' });
    }
  });
  errors.push(...viewProblems(query, pointer));
  if (errors.length > 0) throw invalidInput(`${errors.length} invalid field${errors.length > 1 ? 's' : ''} in the funnels query`, errors);
}

/** The fields of the other views than `steps`, each given only with its view. */
const VIEW_FIELDS = { interval: ['trends'], binCount: ['time_to_convert'], funnelFromStep: ['trends', 'time_to_convert'], funnelToStep: ['trends', 'time_to_convert'], breakdown: ['steps'] } as const;

function viewProblems(query: FunnelsQuery, pointer: string): ProblemError[] {
  const view = query.funnelVizType ?? 'steps';
  const errors: ProblemError[] = [];
  for (const [field, views] of Object.entries(VIEW_FIELDS)) {
    if (query[field as keyof typeof VIEW_FIELDS] !== undefined && !(views as readonly string[]).includes(view)) {
      errors.push({ pointer: `${pointer}/${field}`, detail: `applies to funnelVizType ${views.map((v) => JSON.stringify(v)).join(' and ')} only` });
    }
  }
  const { from, to } = funnelSpan(query);
  const last = query.steps.length - 1;
  if (to > last) errors.push({ pointer: `${pointer}/funnelToStep`, detail: `must be a step of the funnel: 1 to ${last}` });
  else if (from >= to) errors.push({ pointer: `${pointer}/funnelFromStep`, detail: `must be a step before funnelToStep (${to})` });
  return errors;
}

/** The steps (from 0) a view other than `steps` counts conversions between: by default the first and the last. */
export function funnelSpan(query: FunnelsQuery): { from: number; to: number } {
  return { from: query.funnelFromStep ?? 0, to: query.funnelToStep ?? query.steps.length - 1 };
}
