/** Structured logs: one JSON object per line on stdout. Never pass keys or secrets as fields. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Errors carry their name and message; the stack only at debug level, where it helps most. */
function errorFields(fields: LogFields | undefined, withStack: boolean): LogFields | undefined {
  if (!fields) return fields;
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, ...(withStack ? { stack: v.stack } : {}) } : v;
  }
  return out;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[lvl] < RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...errorFields(fields, level === 'debug') }) + '\n');
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** A logger that drops everything, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger('error', () => {});
