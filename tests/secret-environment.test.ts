import { expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueName } from './helpers/engine-dir';
import { startServiceProcess, type Runtime } from './helpers/service-process';

/**
 * The service started as `npm start` (and `npm run start:deno`) starts it, with keys in its
 * environment: once it listens, its start-up environment as the kernel shows it to any reader of
 * /proc/PID/environ (the embedded engine's file() included) holds none of them, while the service
 * still answers to them.
 */
for (const runtime of ['bun', 'deno'] as Runtime[]) {
  test(`${runtime}: the keys are gone from /proc/PID/environ once the service listens`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-environment-'));
    const secrets = {
      PUBLIC_API_KEYS: `pk_${uniqueName('environ')}`,
      PRIVATE_API_KEYS: `sk_${uniqueName('environ')}`,
      METRICS_TOKEN: `mt_${uniqueName('environ')}`,
      CLICKHOUSE_PASSWORD: `pw_${uniqueName('environ')}`,
    };
    const service = await startServiceProcess({ DATA_DIR: dir, ...secrets }, runtime);
    try {
      const environ = readFileSync(`/proc/${service.proc.pid}/environ`, 'latin1');
      for (const [name, value] of Object.entries(secrets)) {
        expect(environ).not.toContain(value);
        expect(environ).toContain(`\0${name}=${'*'.repeat(value.length)}\0`);
      }
      expect(environ).toContain(`\0DATA_DIR=${dir}\0`);
      const res = await fetch(`${service.url}/events?limit=1`, { headers: { authorization: `Bearer ${secrets.PRIVATE_API_KEYS}` } });
      expect(res.status).toBe(200);
      expect(service.lines.join('\n')).not.toContain('start-up environment');
    } finally {
      service.proc.kill('SIGTERM');
      await service.proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
