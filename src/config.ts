import { existsSync, readFileSync } from 'node:fs';
import { normalizeOrigin, ORIGIN_RULE } from './http/origins';
import { parseRate } from './http/token-buckets';
import { CidrList } from './net/address-ranges';
import { parseAllowlist } from './net/egress-policy';
import { IDENTIFIER_PATTERN } from './storage/storage';

/** A setting's raw text turned into its typed value, or an error message. */
type Parser<T> = (raw: string) => T;

class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const int =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(`must be a whole number, got ${JSON.stringify(raw)}`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`must be between ${min} and ${max}, got ${n}`);
    return n;
  };

const text: Parser<string> = (raw) => raw;

/** A port, or empty for none. */
const optionalPort: Parser<number | undefined> = (raw) => (raw === '' ? undefined : int(0, 65535)(raw));

const nonEmpty: Parser<string> = (raw) => {
  if (raw === '') throw new ConfigError('must not be empty');
  return raw;
};

const KEY_PATTERN = /^[\x21-\x7e]{8,256}$/;

const keyList: Parser<string[]> = (raw) => {
  const keys = raw.split(',').map((k) => k.trim()).filter((k) => k !== '');
  for (const k of keys) if (!KEY_PATTERN.test(k)) throw new ConfigError('each key must be 8 to 256 printable ASCII characters without spaces');
  return keys;
};

/** One secret with the rules of a key, or empty for none. */
const optionalToken: Parser<string> = (raw) => {
  if (raw !== '' && !KEY_PATTERN.test(raw)) throw new ConfigError('must be empty or 8 to 256 printable ASCII characters without spaces');
  return raw;
};

const identifierText: Parser<string> = (raw) => {
  if (!new RegExp(IDENTIFIER_PATTERN).test(raw)) throw new ConfigError(`must be a database identifier ([A-Za-z_][A-Za-z0-9_]*), got ${JSON.stringify(raw)}`);
  return raw;
};

const optionalIdentifier: Parser<string> = (raw) => (raw === '' ? '' : identifierText(raw));

const httpUrl: Parser<string> = (raw) => {
  if (raw === '') return '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('must be an http(s) URL');
  return raw;
};

/** A file system path the engine's statements quote: no quotes, backslashes or line breaks. */
const pathText: Parser<string> = (raw) => {
  if (/['"\\\n\r]/.test(raw)) throw new ConfigError('must be a path without quotes, backslashes or line breaks');
  return raw;
};

const bool: Parser<boolean> = (raw) => {
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`must be true or false, got ${JSON.stringify(raw)}`);
  return raw === 'true';
};

/** Comma-separated origins, normalized; never `*` (these origins may use private keys). */
const originList: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item) => {
      if (item === '*') throw new ConfigError('must list origins; * is refused, since these origins may call routes that take private keys');
      const origin = normalizeOrigin(item);
      if (!origin) throw new ConfigError(`each item must be ${ORIGIN_RULE}, got ${JSON.stringify(item)}`);
      return origin;
    });

/** A URL path of the service's own: segments of unreserved characters. */
const urlPath: Parser<string> = (raw) => {
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(raw)) throw new ConfigError(`must be a path such as /js/site.js (segments of letters, digits and . _ ~ -), got ${JSON.stringify(raw)}`);
  return raw;
};

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Comma-separated durations with units, such as `5s,30s,2m,1h`; in milliseconds. */
const durationList: Parser<number[]> = (raw) =>
  raw.split(',').map((item) => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(item.trim());
    if (!m) throw new ConfigError(`must be durations such as 5s,30s,2m,1h separated by commas, got ${JSON.stringify(item.trim())}`);
    return Math.round(Number(m[1]) * DURATION_UNITS_MS[m[2]!]!);
  });

/** Who delivers webhooks: `auto` elects one process by a lease (server mode), `on`/`off` override; `true`/`false` as before. */
export type WebhookDeliveryMode = 'auto' | 'on' | 'off';
const deliveryMode: Parser<WebhookDeliveryMode> = (raw) => {
  const mode = raw === 'true' ? 'on' : raw === 'false' ? 'off' : raw;
  if (mode !== 'auto' && mode !== 'on' && mode !== 'off') throw new ConfigError(`must be auto, on or off (true and false mean on and off), got ${JSON.stringify(raw)}`);
  return mode;
};

/** ClickHouse's insert_quorum: 0 (off), a number of replicas, or `auto` (a majority). */
const insertQuorum: Parser<string> = (raw) => {
  if (raw !== 'auto' && !/^\d{1,2}$/.test(raw)) throw new ConfigError(`must be 0 (off), a number of replicas or auto, got ${JSON.stringify(raw)}`);
  return raw === 'auto' ? raw : String(Number(raw));
};

const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    if (!(values as string[]).includes(raw)) throw new ConfigError(`must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw as T;
  };

/** A parser of another module, whose errors become this variable's. */
const via =
  <T>(parse: (raw: string) => T): Parser<T> =>
  (raw) => {
    try {
      return parse(raw);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  };

const cidrList = (raw: string) => new CidrList(raw.split(',').map((e) => e.trim()).filter((e) => e !== ''));

/** Every setting, its variable and how to read it. Defaults live in .env.defaults only. */
const SPEC = {
  port: ['PORT', int(0, 65535)],
  host: ['HOST', nonEmpty],
  shutdownTimeoutMs: ['SHUTDOWN_TIMEOUT_MS', int(0, 600_000)],
  logLevel: ['LOG_LEVEL', oneOf('debug', 'info', 'warn', 'error')],
  // Any value but production is development here (bun test sets test, hosts may say staging).
  nodeEnv: ['NODE_ENV', text],
  publicApiKeys: ['PUBLIC_API_KEYS', keyList],
  privateApiKeys: ['PRIVATE_API_KEYS', keyList],
  metricsToken: ['METRICS_TOKEN', optionalToken],
  corsOrigins: ['CORS_ORIGINS', originList],
  trackerScriptPath: ['TRACKER_SCRIPT_PATH', urlPath],
  trackerCollectPath: ['TRACKER_COLLECT_PATH', urlPath],
  dataDir: ['DATA_DIR', nonEmpty],
  engineReadSessions: ['ENGINE_READ_SESSIONS', int(1, 16)],
  clickhouseUrl: ['CLICKHOUSE_URL', httpUrl],
  clickhouseUser: ['CLICKHOUSE_USER', text],
  clickhousePassword: ['CLICKHOUSE_PASSWORD', text],
  clickhouseCluster: ['CLICKHOUSE_CLUSTER', optionalIdentifier],
  clickhouseInsertQuorum: ['CLICKHOUSE_INSERT_QUORUM', insertQuorum],
  clickhouseRequestTimeoutMs: ['CLICKHOUSE_REQUEST_TIMEOUT_MS', int(1000, 3_600_000)],
  clickhouseSandboxUsers: ['CLICKHOUSE_SANDBOX_USERS', oneOf('auto', 'on', 'off')],
  metaDatabase: ['META_DATABASE', identifierText],
  defaultWorkspaceDatabase: ['DEFAULT_WORKSPACE_DATABASE', identifierText],
  workspaceRefreshMs: ['WORKSPACE_REFRESH_MS', int(100, 3_600_000)],
  workspaceChangePollMs: ['WORKSPACE_CHANGE_POLL_MS', int(50, 60_000)],
  maxBodyBytes: ['MAX_BODY_BYTES', int(1024, 512 * 1024 * 1024)],
  maxEventsPerRequest: ['MAX_EVENTS_PER_REQUEST', int(1, 1_000_000)],
  maxEventBytes: ['MAX_EVENT_BYTES', int(256, 64 * 1024 * 1024)],
  requestBodyTimeoutMs: ['REQUEST_BODY_TIMEOUT_MS', int(100, 600_000)],
  requestBodyMinBytesPerSecond: ['REQUEST_BODY_MIN_BYTES_PER_SECOND', int(0, 1024 * 1024 * 1024)],
  // Bun counts whole seconds, at most 255.
  httpIdleTimeoutMs: ['HTTP_IDLE_TIMEOUT_MS', int(1000, 255_000)],
  httpConnectionGate: ['HTTP_CONNECTION_GATE', bool],
  ingestFlushRows: ['INGEST_FLUSH_ROWS', int(1, 1_000_000)],
  ingestLoadMaxAgeMs: ['INGEST_LOAD_MAX_AGE_MS', int(0, 3_600_000)],
  ingestWriters: ['INGEST_WRITERS', int(1, 16)],
  ingestQueueMaxEvents: ['INGEST_QUEUE_MAX_EVENTS', int(1, 10_000_000)],
  ingestFsync: ['INGEST_FSYNC', bool],
  ingestLogDir: ['INGEST_LOG_DIR', pathText],
  ingestLogSegmentBytes: ['INGEST_LOG_SEGMENT_BYTES', int(64 * 1024, 4 * 1024 ** 3)],
  ingestLogMaxBytes: ['INGEST_LOG_MAX_BYTES', int(1024 * 1024, 1024 ** 4)],
  ingestLoadMaxLagMs: ['INGEST_LOAD_MAX_LAG_MS', int(1000, 7 * 86_400_000)],
  ingestReadWaitMs: ['INGEST_READ_WAIT_MS', int(100, 600_000)],
  ingestAck: ['INGEST_ACK', oneOf('auto', 'log', 'loaded')],
  dedupWindowMs: ['DEDUP_WINDOW_MS', int(1000, 30 * 86_400_000)],
  dedupMaxMessageIds: ['DEDUP_MAX_MESSAGE_IDS', int(1, 100_000_000)],
  queryMaxStatements: ['QUERY_MAX_STATEMENTS', int(1, 1000)],
  queryTimeoutMs: ['QUERY_TIMEOUT_MS', int(100, 3_600_000)],
  queryMaxResultRows: ['QUERY_MAX_RESULT_ROWS', int(1, 100_000_000)],
  queryMaxResultBytes: ['QUERY_MAX_RESULT_BYTES', int(1024, 16 * 1024 * 1024 * 1024)],
  queryMaxMemoryBytes: ['QUERY_MAX_MEMORY_BYTES', int(1024 * 1024, 1024 * 1024 * 1024 * 1024)],
  queryMaxRequestResultBytes: ['QUERY_MAX_REQUEST_RESULT_BYTES', int(1024, 64 * 1024 * 1024 * 1024)],
  queryResultBytesInFlight: ['QUERY_RESULT_BYTES_IN_FLIGHT', int(1024, 64 * 1024 * 1024 * 1024)],
  queryConcurrency: ['QUERY_CONCURRENCY', int(1, 64)],
  queryQueueMax: ['QUERY_QUEUE_MAX', int(0, 100_000)],
  propertyColumnsMax: ['PROPERTY_COLUMNS_MAX', int(0, 1000)],
  sessionTimeoutMinutes: ['SESSION_TIMEOUT_MINUTES', int(1, 1440)],
  visitBuilderLeaseMs: ['VISIT_BUILDER_LEASE_MS', int(1000, 600_000)],
  dashboardAnswersMaxAgeSeconds: ['DASHBOARD_ANSWERS_MAX_AGE_SECONDS', int(0, 86_400)],
  webhookDelivery: ['WEBHOOK_DELIVERY', deliveryMode],
  webhookLeaseMs: ['WEBHOOK_LEASE_MS', int(1000, 600_000)],
  webhookTimeoutMs: ['WEBHOOK_TIMEOUT_MS', int(100, 600_000)],
  webhookRetrySchedule: ['WEBHOOK_RETRY_SCHEDULE', durationList],
  webhookBlockingRetries: ['WEBHOOK_BLOCKING_RETRIES', int(0, 100)],
  webhookBatchSize: ['WEBHOOK_BATCH_SIZE', int(1, 10_000)],
  webhookBufferEvents: ['WEBHOOK_BUFFER_EVENTS', int(1, 1_000_000)],
  webhookSettleMs: ['WEBHOOK_SETTLE_MS', int(0, 3_600_000)],
  // Hardening for the open internet (docs/security.md).
  egressAllowlist: ['EGRESS_ALLOWLIST', via(parseAllowlist)],
  trustedProxies: ['TRUSTED_PROXIES', via(cidrList)],
  storeClientAddress: ['STORE_CLIENT_ADDRESS', bool],
  rateLimitCollectPerKey: ['RATE_LIMIT_COLLECT_PER_KEY', via(parseRate)],
  rateLimitCollectPerAddress: ['RATE_LIMIT_COLLECT_PER_ADDRESS', via(parseRate)],
  rateLimitReadPerKey: ['RATE_LIMIT_READ_PER_KEY', via(parseRate)],
  rateLimitReadPerAddress: ['RATE_LIMIT_READ_PER_ADDRESS', via(parseRate)],
  rateLimitAuthFailuresPerAddress: ['RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS', via(parseRate)],
  maxBodyBytesInFlight: ['MAX_BODY_BYTES_IN_FLIGHT', int(1024 * 1024, 64 * 1024 * 1024 * 1024)],
  maxBodyBytesPerAddress: ['MAX_BODY_BYTES_PER_ADDRESS', int(1024, 64 * 1024 * 1024 * 1024)],
  memorySoftLimitMb: ['MEMORY_SOFT_LIMIT_MB', int(0, 1024 * 1024)],
  queryWorkspaceConcurrency: ['QUERY_WORKSPACE_CONCURRENCY', int(1, 64)],
  queryWorkspaceQueueMax: ['QUERY_WORKSPACE_QUEUE_MAX', int(0, 100_000)],
  queryWorkspaceSecondsPerMinute: ['QUERY_WORKSPACE_SECONDS_PER_MINUTE', int(0, 3600)],
  retentionDays: ['RETENTION_DAYS', int(0, 36_500)],
  importMaxBodyBytes: ['IMPORT_MAX_BODY_BYTES', int(1024, 64 * 1024 * 1024 * 1024)],
  backupDir: ['BACKUP_DIR', pathText],
  streamMaxConnectionsPerKey: ['STREAM_MAX_CONNECTIONS_PER_KEY', int(1, 10_000)],
  streamBufferBytes: ['STREAM_BUFFER_BYTES', int(4096, 256 * 1024 * 1024)],
  clickhouseInterfacePort: ['CLICKHOUSE_INTERFACE_PORT', optionalPort],
} as const satisfies Record<string, readonly [string, Parser<unknown>]>;

export type Config = { -readonly [K in keyof typeof SPEC]: ReturnType<(typeof SPEC)[K][1]> };

/** Parses `KEY=value` lines; `#` starts a comment line; values may be single- or double-quoted. */
export function parseEnvFile(content: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of content.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    let value = m[2]!;
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2]!;
    vars[m[1]!] = value;
  }
  return vars;
}

/** Variables of an env file, or none when the file does not exist. */
export function readEnvFile(path: string): Record<string, string> {
  return existsSync(path) ? parseEnvFile(readFileSync(path, 'utf8')) : {};
}

/**
 * Builds the configuration from layered sources, later winning. Throws one error naming every
 * variable that is missing or invalid, so a bad deployment stops at start with a clear message.
 */
export function buildConfig(...layers: Record<string, string | undefined>[]): Config {
  const merged: Record<string, string> = {};
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== undefined) merged[k] = v;
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const [field, [variable, parse]] of Object.entries(SPEC)) {
    const raw = merged[variable];
    if (raw === undefined) {
      problems.push(`${variable}: is not set (and has no default in .env.defaults)`);
      continue;
    }
    try {
      config[field] = parse(raw.trim());
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(`${variable}: ${err.message}`);
    }
  }
  if (problems.length > 0) throw new Error(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return config as Config;
}

const KEY_VARIABLES = ['PUBLIC_API_KEYS', 'PRIVATE_API_KEYS'] as const;

/** The key variables still holding a key shipped in `dir`/.env.defaults, which anyone can read. */
export function shippedKeyVariables(config: Config, dir = process.cwd()): string[] {
  const defaults = readEnvFile(`${dir}/.env.defaults`);
  const configured = { PUBLIC_API_KEYS: config.publicApiKeys, PRIVATE_API_KEYS: config.privateApiKeys };
  return KEY_VARIABLES.filter((variable) => {
    const shipped = keyList(defaults[variable] ?? '');
    return configured[variable].some((key) => shipped.includes(key));
  });
}

/**
 * `.env.defaults`, then `.env`, then the process environment, all relative to `dir`. With
 * NODE_ENV=production it refuses the shipped keys, so nobody exposes them by accident.
 */
export function loadConfig(dir = process.cwd(), env: Record<string, string | undefined> = process.env): Config {
  const config = buildConfig(readEnvFile(`${dir}/.env.defaults`), readEnvFile(`${dir}/.env`), env);
  const shipped = shippedKeyVariables(config, dir);
  if (config.nodeEnv === 'production' && shipped.length > 0) {
    throw new Error(
      `invalid configuration:\n  ${shipped.map((v) => `${v}: holds the development key shipped in .env.defaults`).join('\n  ')}\n` +
        `  NODE_ENV=production refuses the shipped keys: set ${shipped.join(' and ')} to keys of your own ` +
        '(for example: openssl rand -hex 24), or NODE_ENV=development on a machine nobody else can reach.',
    );
  }
  return config;
}
