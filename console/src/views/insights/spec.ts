import type { FormContext } from './fields';
import type { AnswerOf, Display, Kind, QueryOf } from './types';

/** What the chart of an answer may change without asking again: how it is drawn. */
export interface RenderContext {
  display: Display;
  setDisplay(display: Display): void;
}

/** One kind of insight: its form and how its answer is drawn. */
export interface KindSpec<K extends Kind> {
  kind: K;
  label: string;
  /** One line under the title: the question it answers. */
  question: string;
  form(query: QueryOf[K], ctx: FormContext): HTMLElement[];
  render(answer: AnswerOf[K], query: QueryOf[K], view: RenderContext): HTMLElement;
}
