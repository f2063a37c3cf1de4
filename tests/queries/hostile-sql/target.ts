/**
 * The service the hostile-SQL fuzzer attacks, with canaries a breach would reveal: the service
 * runs as a process of its own (so /proc/self/environ is its start-up environment: DATA_DIR and a
 * marked variable; its admin key is there too until the service overwrites it at start), over a fresh DATA_DIR holding a canary file; a victim workspace has marked
 * events and a webhook with a marked URL path and its signing secret. The attacker is another
 * workspace's private key. Every canary is random, so no answer can hold one by chance.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../../helpers/project-root';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process';
import type { Terrain } from './derivation';
import { callApi as call } from './doors';

export interface Canary {
  what: string;
  value: string;
}

export interface Target {
  url: string;
  attackerKey: string;
  /** The victim workspace's private key: only to check that its canaries are there. */
  victimKey: string;
  /** The service's process id. */
  pid: number;
  terrain: Terrain;
  canaries: Canary[];
  /** Files INTO OUTFILE or INSERT INTO FUNCTION file() managed to write (none, unless the sandbox broke). */
  outfiles(): string[];
  stop(): Promise<void>;
}

const marker = (what: string) => `${what}${crypto.randomUUID().replaceAll('-', '')}`;

/**
 * Starts the service and plants the canaries. `settings` are added to its environment (queue
 * sizes, statement limits). The service's working directory is the project's, as with `npm start`.
 */
export async function startTarget(settings: Record<string, string> = {}): Promise<Target> {
  const root = mkdtempSync(join(tmpdir(), 'analytics-hostile-sql-'));
  const dataDir = join(root, 'data');
  const outfileDir = join(root, 'outfiles');
  mkdirSync(dataDir);
  mkdirSync(outfileDir);
  const adminKey = marker('sk_admin_');
  const environmentMark = marker('ENVCANARY');
  const meta = `meta_${marker('').slice(0, 12)}`;
  let service: ServiceProcess | undefined;
  try {
    service = await startServiceProcess({
      DATA_DIR: dataDir,
      META_DATABASE: meta,
      PRIVATE_API_KEYS: adminKey,
      PUBLIC_API_KEYS: marker('pk_admin_'),
      EGRESS_ALLOWLIST: '127.0.0.0/8',
      HOSTILE_SQL_CANARY: environmentMark,
      // The fuzzer keeps 6 statements and a dashboard's 4 tiles in flight; a statement that runs
      // long (a read of an unreachable address) should not hold a slot for long.
      QUERY_WORKSPACE_CONCURRENCY: '2',
      QUERY_WORKSPACE_QUEUE_MAX: '100',
      QUERY_TIMEOUT_MS: '5000',
      ...settings,
    });
    const url = service.url;
    const fileMarker = marker('FILECANARY');
    const canaryFile = join(dataDir, 'hostile-sql-canary.txt');
    writeFileSync(canaryFile, `${fileMarker}\n`);

    const attacker = await call(url, adminKey, 'POST', '/workspaces', { name: 'Attacker' });
    const victim = await call(url, adminKey, 'POST', '/workspaces', { name: 'Victim' });
    const victimMarks = { event: marker('EVENTCANARY'), userId: marker('USERCANARY'), property: marker('PROPCANARY') };
    await call(url, victim.publicApiKey, 'POST', '/events', {
      events: [{ type: 'track', event: victimMarks.event, userId: victimMarks.userId, properties: { k: 7, secret: victimMarks.property } }],
    });
    const hookPath = marker('HOOKCANARY');
    const hook = await call(url, victim.privateApiKey, 'POST', '/webhooks', { url: `http://127.0.0.1:9/${hookPath}`, eventNames: ['never-sent'] });
    // The attacker's own events, for its benign statements to read.
    await call(url, attacker.publicApiKey, 'POST', '/events', {
      events: [
        ...Array.from({ length: 20 }, (_, i) => ({ type: 'track', event: i % 2 ? 'view' : 'click', userId: `u${i % 5}`, properties: { k: i } })),
        // Values that are paths, for a column transformer or lambda to hand to file().
        ...['/proc/self/environ', '/proc/self/cmdline'].map((path) => ({ type: 'track', event: path, userId: 'u0', properties: { path } })),
      ],
    });
    // Reads by each workspace wait for its events to be loaded.
    await call(url, victim.privateApiKey, 'POST', '/queries', { queries: ['SELECT count() FROM events'] });
    await call(url, attacker.privateApiKey, 'POST', '/queries', { queries: ['SELECT count() FROM events'] });

    const proc = service.proc;
    return {
      url,
      attackerKey: attacker.privateApiKey,
      victimKey: victim.privateApiKey,
      pid: proc.pid,
      terrain: {
        own: attacker.databaseName,
        other: victim.databaseName,
        meta,
        dataDir,
        canaryFile,
        canaryFileFromCwd: relative(PROJECT_ROOT, canaryFile),
        outfileDir,
      },
      canaries: [
        { what: 'the admin key', value: adminKey },
        { what: 'the data directory', value: dataDir },
        { what: "a variable of the service's environment", value: environmentMark },
        { what: 'the canary file in DATA_DIR', value: fileMarker },
        { what: "the victim's event name", value: victimMarks.event },
        { what: "the victim's userId", value: victimMarks.userId },
        { what: "the victim's property", value: victimMarks.property },
        { what: "the victim's webhook path", value: hookPath },
        { what: "the victim's webhook secret", value: hook.secret as string },
      ],
      outfiles: () => readdirSync(outfileDir),
      stop: async () => {
        proc.kill('SIGTERM');
        await proc.exited;
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    service?.proc.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

/** The canaries in `text` that the statement did not itself spell, as they are or in hex. */
export function canariesIn(text: string, canaries: readonly Canary[], spelled: string): string[] {
  return canaries
    .filter(({ value }) => !spelled.includes(value))
    .filter(({ value }) => {
      const hex = Buffer.from(value).toString('hex');
      return text.includes(value) || text.includes(hex) || text.includes(hex.toUpperCase());
    })
    .map(({ what }) => what);
}
