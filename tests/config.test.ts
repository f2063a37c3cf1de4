import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, loadConfig, parseEnvFile, readEnvFile, shippedKeyVariables } from '../src/config';
import { PROJECT_ROOT } from './helpers/project-root';

const defaults = readEnvFile(join(PROJECT_ROOT, '.env.defaults'));

describe('configuration', () => {
  test('.env.defaults alone gives a complete configuration', () => {
    const config = buildConfig(defaults);
    expect(config.port).toBe(4000);
    expect(config.dataDir).toBe('./data');
    expect(config.clickhouseUrl).toBe('');
    expect(config.maxBodyBytes).toBe(10 * 1024 * 1024);
    expect(config.maxEventsPerRequest).toBe(10_000);
    expect(config.maxEventBytes).toBe(32 * 1024);
  });

  test('docs/configuration.md lists every setting of .env.defaults with its default', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs', 'configuration.md'), 'utf8');
    const listed = new Map([...page.matchAll(/^\| `([A-Z_]+)` \| (?:`([^`]*)`|\(empty\)) \|/gm)].map((m) => [m[1]!, m[2] ?? '']));
    expect(Object.fromEntries(Object.keys(defaults).map((name) => [name, listed.get(name)]))).toEqual(defaults);
  });

  test('.env overrides .env.defaults and the environment overrides both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-'));
    try {
      writeFileSync(join(dir, '.env.defaults'), Object.entries(defaults).map(([k, v]) => `${k}=${v}`).join('\n'));
      writeFileSync(join(dir, '.env'), '# local\nPORT=5000\nHOST="127.0.0.1"\n');
      expect(loadConfig(dir, {}).port).toBe(5000);
      expect(loadConfig(dir, {}).host).toBe('127.0.0.1');
      expect(loadConfig(dir, { PORT: '6000' }).port).toBe(6000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('keys are split on commas and trimmed', () => {
    const config = buildConfig(defaults, { PUBLIC_API_KEYS: ' pk_aaaaaaaa , pk_bbbbbbbb ,' });
    expect(config.publicApiKeys).toEqual(['pk_aaaaaaaa', 'pk_bbbbbbbb']);
  });

  const invalid: Array<[string, string, string]> = [
    ['PORT', 'eighty', 'must be a whole number'],
    ['PORT', '70000', 'between 0 and 65535'],
    ['MAX_BODY_BYTES', '-1', 'must be a whole number'],
    ['CLICKHOUSE_URL', 'localhost:8123', 'http(s) URL'],
    ['META_DATABASE', 'meta; DROP', 'database identifier'],
    ['LOG_LEVEL', 'loud', 'one of debug, info, warn, error'],
    ['PUBLIC_API_KEYS', 'short', '8 to 256 printable'],
    ['WEBHOOK_DELIVERY', 'yes', 'must be auto, on or off'],
    ['CLICKHOUSE_INSERT_QUORUM', 'all', 'must be 0 (off), a number of replicas or auto'],
  ];
  for (const [variable, value, message] of invalid) {
    test(`${variable}=${value} stops the start with a message naming it`, () => {
      expect(() => buildConfig(defaults, { [variable]: value })).toThrow(new RegExp(`${variable}: .*${message.replace(/[()]/g, '\\$&')}`));
    });
  }

  test('WEBHOOK_DELIVERY: auto, on and off, with true and false as before', () => {
    const mode = (value: string) => buildConfig(defaults, { WEBHOOK_DELIVERY: value }).webhookDelivery;
    expect([mode('auto'), mode('on'), mode('off'), mode('true'), mode('false')]).toEqual(['auto', 'on', 'off', 'on', 'off']);
    expect(buildConfig(defaults).webhookDelivery).toBe('auto');
  });

  test('a variable with no value anywhere is named', () => {
    const { PORT: _port, ...rest } = defaults;
    expect(() => buildConfig(rest)).toThrow('PORT: is not set');
  });

  test('env files: comments, export prefixes and quotes', () => {
    expect(parseEnvFile("# c\nexport A=1\nB='two words'\nC=\"x=y\"\n  D = 4  \n")).toEqual({ A: '1', B: 'two words', C: 'x=y', D: '4' });
  });

  describe('the shipped keys', () => {
    const withDefaults = (body: (dir: string) => void) => {
      const dir = mkdtempSync(join(tmpdir(), 'config-'));
      try {
        writeFileSync(join(dir, '.env.defaults'), Object.entries(defaults).map(([k, v]) => `${k}=${v}`).join('\n'));
        body(dir);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    test('NODE_ENV=production refuses them, naming each variable to set', () =>
      withDefaults((dir) => {
        expect(() => loadConfig(dir, { NODE_ENV: 'production' })).toThrow(/PUBLIC_API_KEYS: holds the development key[\s\S]*PRIVATE_API_KEYS: holds[\s\S]*set PUBLIC_API_KEYS and PRIVATE_API_KEYS/);
        expect(() => loadConfig(dir, { NODE_ENV: 'production', PUBLIC_API_KEYS: 'pk_own_key_1234' })).toThrow(/set PRIVATE_API_KEYS to keys of your own/);
        expect(() => loadConfig(dir, { NODE_ENV: 'production', PRIVATE_API_KEYS: `sk_own_key_1234,${defaults.PRIVATE_API_KEYS}`, PUBLIC_API_KEYS: 'pk_own_key_1234' })).toThrow(/PRIVATE_API_KEYS: holds/);
      }));

    test('NODE_ENV=production with keys of its own starts', () =>
      withDefaults((dir) => {
        const config = loadConfig(dir, { NODE_ENV: 'production', PUBLIC_API_KEYS: 'pk_own_key_1234', PRIVATE_API_KEYS: 'sk_own_key_1234' });
        expect(config.privateApiKeys).toEqual(['sk_own_key_1234']);
        expect(shippedKeyVariables(config, dir)).toEqual([]);
      }));

    test('development accepts them and says which are in use', () =>
      withDefaults((dir) => {
        const config = loadConfig(dir, { NODE_ENV: 'development', PUBLIC_API_KEYS: 'pk_own_key_1234' });
        expect(shippedKeyVariables(config, dir)).toEqual(['PRIVATE_API_KEYS']);
      }));
  });
});
