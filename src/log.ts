/** Structured logs: one JSON object per line on stdout. Never pass keys or secrets as fields. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  /** Whether lines of `level` are written (a caller may then skip building their fields). */
  writes(level: LogLevel): boolean;
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

/**
 * Lines for stdout, written together once per turn of the event loop: a line per request, each
 * its own write, cost a sixth of a small request's time. What is pending is written at exit;
 * a SIGKILL can take the lines of the last turn.
 */
function stdoutLines(): (line: string) => void {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    process.stdout.write(text);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending === '') setImmediate(flush);
    pending += line;
  };
}

export function createLogger(level: LogLevel, write: (line: string) => void = stdoutLines()): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[lvl] < RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...errorFields(fields, level === 'debug') }) + '\n');
  };
  return { writes: (lvl) => RANK[lvl] >= RANK[level], debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** A logger that drops everything, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger('error', () => {});
