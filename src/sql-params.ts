import type { Params } from './storage/storage';

/**
 * The bound parameters of a statement being compiled: each value gets a fresh name and reaches
 * the engine only as a parameter, never in the SQL text.
 */
export class SqlParams {
  readonly values: Params = {};
  private next = 0;

  /** `{pN:type}` for `value`, bound. `type` is the compiler's own ClickHouse type, never user text. */
  bind(value: Params[string], type: string): string {
    const name = `p${this.next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }
}
