import { join } from 'node:path';
import { buildConfig, readEnvFile, type Config } from '../../src/config';
import { createLogger, silentLogger, type Logger } from '../../src/log';
import type { HostResolver } from '../../src/net/host-resolver';
import { startService, type Service } from '../../src/service';
import type { Storage } from '../../src/storage/storage';
import { denoDataDir, SERVED_BY_DENO, startDenoService } from './deno-service';
import { ENGINE_DIR, uniqueName } from './engine-dir';
import { PROJECT_ROOT } from './project-root';

export interface TestService extends Service {
  config: Config;
  /** The settings this service was started with beyond .env.defaults. */
  settings: Record<string, string>;
  publicKey: string;
  privateKey: string;
  /** `fetch` against the service with an optional bearer key and JSON body. */
  request(method: string, path: string, options?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
}

/**
 * The real service on a free port over the shared engine directory, with its own metadata and
 * default-workspace databases and keys. Settings come from .env.defaults plus `overrides`; a
 * second service given the first one's `settings` shares its workspaces, as a restart would.
 * Under TEST_RUNTIME=deno the service is a Deno process over a directory of its own instead.
 * Webhooks may reach loopback receivers (EGRESS_ALLOWLIST), which the tests run; a test of the
 * egress policy itself overrides it. MEMORY_SOFT_LIMIT_MB is 0 (no heap collector) unless given. `resolver` replaces the system's for webhook host names.
 */
export async function startTestService(overrides: Record<string, string> = {}, storage?: Storage, log?: Logger, resolver?: HostResolver): Promise<TestService> {
  const publicKey = overrides.PUBLIC_API_KEYS ?? `pk_${uniqueName('test')}`;
  const privateKey = overrides.PRIVATE_API_KEYS ?? `sk_${uniqueName('test')}`;
  const settings = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: SERVED_BY_DENO ? denoDataDir() : ENGINE_DIR,
    META_DATABASE: uniqueName('meta'),
    DEFAULT_WORKSPACE_DATABASE: uniqueName('ws'),
    PUBLIC_API_KEYS: publicKey,
    PRIVATE_API_KEYS: privateKey,
    EGRESS_ALLOWLIST: '127.0.0.0/8',
    // The test process holds many services and the engine: its memory is no one service's, and a
    // collector per service would collect the runner's heap over and over. tests/heap-collector.test.ts sets it.
    MEMORY_SOFT_LIMIT_MB: '0',
    ...overrides,
  };
  // Services in this process share the engine's directory, but each needs an ingest log of its
  // own, also when started with another's settings (a stopped service leaves its log empty).
  const logDir = SERVED_BY_DENO ? {} : { INGEST_LOG_DIR: overrides.INGEST_LOG_DIR ?? join(ENGINE_DIR, uniqueName('ingest-log')) };
  const config = buildConfig(readEnvFile(join(PROJECT_ROOT, '.env.defaults')), { ...settings, ...logDir });
  const logger = log ?? (process.env.TEST_LOG ? createLogger('debug') : silentLogger);
  if (SERVED_BY_DENO && (storage || resolver)) throw new Error('a service given its storage or resolver runs in this process: this test cannot run under TEST_RUNTIME=deno');
  const service = SERVED_BY_DENO ? await startDenoService(settings, logger) : await startService(config, logger, storage, resolver);
  const request: TestService['request'] = (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    return fetch(service.url + path, { method, headers, body });
  };
  return Object.assign(service, { config, settings, publicKey, privateKey, request });
}

/** POSTs events (with the public key unless told) and returns the parsed 201 body (fails the test otherwise). */
export async function sendEvents(svc: Pick<TestService, 'request' | 'publicKey'>, events: unknown[], key = svc.publicKey): Promise<{ results: Array<Record<string, unknown>> }> {
  const res = await svc.request('POST', '/events', { key, body: { events } });
  if (res.status !== 201) throw new Error(`POST /events answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { results: Array<Record<string, unknown>> };
}

/** GET /events (with the private key unless told) and a query string; returns status and body. */
export async function listEvents(svc: TestService, query = '', key = svc.privateKey): Promise<{ status: number; body: any }> {
  const res = await svc.request('GET', `/events${query ? `?${query}` : ''}`, { key });
  return { status: res.status, body: await res.json() };
}

/** A workspace as POST /workspaces answers it, keys included. */
export interface CreatedWorkspace {
  workspaceId: string;
  name: string;
  databaseName: string;
  isDefault: boolean;
  createdAt: string;
  properties?: Record<string, unknown>;
  allowedOrigins: string[];
  retentionDays: number;
  publicApiKey: string;
  privateApiKey: string;
}

/** POST /workspaces with the admin key; fails the test unless it answers 200. */
export async function createWorkspace(svc: Pick<TestService, 'request' | 'privateKey'>, input: Record<string, unknown>): Promise<CreatedWorkspace> {
  const res = await svc.request('POST', '/workspaces', { key: svc.privateKey, body: input });
  if (res.status !== 200) throw new Error(`POST /workspaces answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as CreatedWorkspace;
}
