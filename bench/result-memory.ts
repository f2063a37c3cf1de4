/**
 * `npm run bench:result-memory`: the peak resident memory of the service (`bun src/main.ts`, the
 * settings of .env.defaults) while it answers large results: ten statements of 60 MB results in
 * one POST /queries, ten such statements at once through /clickhouse, and clients that ask for
 * them and read nothing (POST /queries, /clickhouse, POST /queries/export). The stated bound is
 * 2.5 GiB (docs/limits.md#memory). Each case has a service of its own; `--root DIR` runs the
 * service of another checkout (another commit's worktree, for a before-and-after). Prints a Markdown table: each case's answers and peak RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, KEYS, ROOT, rssBytes, startService } from './lib/processes';
import { mib } from './lib/stats';

/** About 60 MB of JSONEachRow: 10,000 rows of 6,000 characters. */
const STATEMENT = "SELECT number AS n, repeat('a', 6000) AS r FROM numbers(10000)";
const STATEMENTS = 10;
/** How long clients that read nothing wait for their answers, at most (their statements run one after another). */
const STALLED_MS = 60_000;

const rootAt = process.argv.indexOf('--root');
const root = rootAt > 0 ? process.argv[rootAt + 1]! : ROOT;
const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-result-memory-'));
const port = await freePort();
const bearer = { authorization: `Bearer ${KEYS.private}`, 'content-type': 'application/json' };
const basic = { authorization: `Basic ${btoa(`default:${KEYS.private}`)}` };
const rows: string[] = [];

/** Runs `work` against a service of its own while sampling its RSS every 50 ms; answers the statuses and the peak. */
async function peakDuring(work: () => Promise<string>): Promise<{ answers: string; peak: number; before: number }> {
  const svc = await startService(join(workDir, 'data'), port, {}, root);
  const pid = svc.proc.pid;
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
  try {
    return { answers: await work(), peak: Math.max(peak, rssBytes(pid)), before };
  } finally {
    clearInterval(timer);
    await svc.stop();
  }
}

const statuses = (list: number[]) => Object.entries(list.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {})).map(([s, n]) => `${n} × ${s}`).join(', ');

/** Requests `init` on a socket of its own and reads only the status line, then holds the socket unread. */
async function unreadRequest(path: string, headers: Record<string, string>, body: string): Promise<{ status: Promise<number>; close(): void }> {
  let resolve!: (status: number) => void;
  const status = new Promise<number>((r) => (resolve = r));
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(s, data) {
        resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(new TextDecoder().decode(data.subarray(0, 20)))?.[1] ?? 0));
        // Read nothing more: the kernel's receive buffer fills and the server's writes stall.
        s.pause();
      },
    },
  });
  const head = Object.entries({ ...headers, host: `127.0.0.1:${port}`, 'content-length': String(Buffer.byteLength(body)) }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${body}`);
  return { status, close: () => socket.end() };
}

async function stalled(make: () => Promise<{ status: Promise<number>; close(): void }>, count: number): Promise<string> {
  const clients = await Promise.all(Array.from({ length: count }, make));
  const answered = await Promise.all(clients.map((c) => Promise.race([c.status, Bun.sleep(STALLED_MS).then(() => 0)])));
  // Every answer begun, none read: what the service holds now is its peak.
  await Bun.sleep(2000);
  for (const c of clients) c.close();
  return statuses(answered) + ' (0: no answer yet)';
}

try {
  const cases: Array<[string, () => Promise<string>]> = [
    [
      `${STATEMENTS} statements of 60 MB in one POST /queries`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/queries`, { method: 'POST', headers: bearer, body: JSON.stringify({ queries: Array(STATEMENTS).fill(STATEMENT) }) });
        const text = await res.text();
        return `${res.status} (${mib(text.length)})`;
      },
    ],
    [
      `${STATEMENTS} requests of 60 MB at once to /clickhouse`,
      async () =>
        statuses(
          await Promise.all(
            Array.from({ length: STATEMENTS }, async () => {
              const res = await fetch(`http://127.0.0.1:${port}/clickhouse?default_format=JSONEachRow`, { method: 'POST', headers: basic, body: STATEMENT });
              await res.arrayBuffer();
              return res.status;
            }),
          ),
        ),
    ],
    [`${STATEMENTS} × POST /queries of 2 statements, answers not read`, () => stalled(() => unreadRequest('/queries', bearer, JSON.stringify({ queries: [STATEMENT, STATEMENT] })), STATEMENTS)],
    [`${STATEMENTS} × /clickhouse, answers not read`, () => stalled(() => unreadRequest('/clickhouse?default_format=JSONEachRow', basic, STATEMENT), STATEMENTS)],
    [`2 × POST /queries/export of 600 MB, not read`, () => stalled(() => unreadRequest('/queries/export', bearer, JSON.stringify({ query: STATEMENT.replace('10000', '100000'), format: 'ndjson' })), 2)],
  ];
  rows.push('| Case | Answers | RSS before | Peak RSS |', '|---|---|---|---|');
  for (const [what, work] of cases) {
    const { answers, peak, before } = await peakDuring(work);
    rows.push(`| ${what} | ${answers} | ${mib(before)} | ${mib(peak)} |`);
    console.error(rows.at(-1));
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
console.log(rows.join('\n'));
