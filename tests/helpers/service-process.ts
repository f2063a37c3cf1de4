import type { Subprocess } from 'bun';
import { PROJECT_ROOT } from './test-service';

export interface ServiceProcess {
  url: string;
  proc: Subprocess<'ignore', 'pipe', 'inherit'>;
  /** Every log line printed so far. */
  lines: string[];
}

/** Starts `bun src/main.ts` as its own process (its own engine) and waits until it listens. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const lines: string[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  let resolveUrl!: (url: string) => void;
  const url = new Promise<string>((r) => (resolveUrl = r));
  (async () => {
    for await (const chunk of proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        const entry = JSON.parse(line) as { msg: string; url?: string };
        if (entry.msg === 'listening') resolveUrl(entry.url!);
      }
    }
  })();
  const started = await Promise.race([url, proc.exited.then((code) => Promise.reject(new Error(`service exited with ${code}: ${lines.join('\n')}`)))]);
  return { url: started, proc, lines };
}
