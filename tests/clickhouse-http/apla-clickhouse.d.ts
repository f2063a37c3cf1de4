/** The part of @apla/clickhouse (a community client without types of its own) that the tests use. */
declare module '@apla/clickhouse' {
  interface Options {
    host: string;
    port: number;
    path?: string;
    user?: string;
    password?: string;
    dataObjects?: boolean;
    queryOptions?: Record<string, string | number>;
  }
  interface Answer {
    meta: Array<{ name: string; type: string }>;
    data: unknown[];
    rows: number;
  }
  export default class ClickHouse {
    constructor(options: Options);
    querying(query: string, options?: { dataObjects?: boolean; format?: string; queryOptions?: Record<string, string | number> }): Promise<Answer>;
    pinging(): Promise<string>;
  }
}
