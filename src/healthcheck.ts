/**
 * The container's health check (the Dockerfile's HEALTHCHECK, compose files): exits 0 when
 * `GET /` of the service configured here answers 200, else prints why and exits 1. The image
 * has no curl; Bun is already there.
 */
import { loadConfig } from './config';
import { localUrl } from './http/serve';

const TIMEOUT_MS = 3000;

try {
  const config = loadConfig();
  const res = await fetch(`${localUrl(config.host, config.port)}/`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!res.ok) throw new Error(`GET / answered ${res.status}`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`unhealthy: ${(err as Error).message}\n`);
  process.exit(1);
}
