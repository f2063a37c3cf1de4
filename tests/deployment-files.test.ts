/**
 * What the Dockerfile and compose files promise, checked on every run without a container
 * engine; `npm run test:image` builds and runs the image itself.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../package.json' with { type: 'json' };
import { PROJECT_ROOT } from './helpers/project-root';

const read = (file: string) => readFileSync(join(PROJECT_ROOT, file), 'utf8');
const dockerfile = read('Dockerfile');
/** The instructions of the last stage: what the running image is made of. */
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const HEALTHCHECK = ['CMD', '/app/node_modules/.bin/bun', 'src/healthcheck.ts'];

describe('the Dockerfile', () => {
  test('installs production dependencies only, in a stage of their own', () => {
    expect(dockerfile).toContain('RUN npm install --omit=dev');
    expect(finalStage).toContain('COPY --from=dependencies /app/node_modules ./node_modules');
    expect(finalStage).not.toMatch(/RUN npm|COPY (tests|bench)/);
  });

  test('runs as a non-root user, in production mode, with a health check and SIGTERM', () => {
    expect(finalStage).toMatch(/^USER analytics$/m);
    expect(finalStage).toContain('NODE_ENV=production');
    expect(finalStage).toContain(`CMD ${JSON.stringify(HEALTHCHECK.slice(1)).replaceAll(',', ', ')}`);
    expect(finalStage).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  test("labels the image with package.json's version", () => {
    expect(finalStage).toContain(`org.opencontainers.image.version="${pkg.version}"`);
  });

  test('.dockerignore keeps tests, benchmarks, data and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'data', '.env', '.git', 'tests', 'bench']) expect(ignored).toContain(entry);
  });
});

describe('the compose files', () => {
  for (const file of ['compose.yaml', 'compose.clickhouse.yaml']) {
    test(`${file}: the image's health check, keys from .env, a graceful stop`, () => {
      const compose = Bun.YAML.parse(read(file)) as { services: Record<string, any> };
      const analytics = compose.services.analytics;
      expect(analytics.build).toBe('.');
      expect(analytics.env_file).toBe('.env');
      expect(analytics.healthcheck.test).toEqual(HEALTHCHECK);
      expect(analytics.stop_grace_period).toBe('30s');
    });
  }

  test('compose.yaml keeps the data in a named volume', () => {
    const compose = Bun.YAML.parse(read('compose.yaml')) as { services: Record<string, any>; volumes: Record<string, unknown> };
    expect(compose.services.analytics.volumes).toEqual(['analytics-data:/data']);
    expect(Object.keys(compose.volumes)).toEqual(['analytics-data']);
  });

  test('compose.clickhouse.yaml points the service at the ClickHouse server once it is healthy', () => {
    const compose = Bun.YAML.parse(read('compose.clickhouse.yaml')) as { services: Record<string, any> };
    expect(compose.services.analytics.environment.CLICKHOUSE_URL).toBe('http://clickhouse:8123');
    expect(compose.services.analytics.depends_on.clickhouse.condition).toBe('service_healthy');
    expect(compose.services.clickhouse.volumes).toEqual(['clickhouse-data:/var/lib/clickhouse']);
  });
});
