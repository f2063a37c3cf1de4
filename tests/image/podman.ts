/** podman as the image test drives it: the settings of containers.conf beside this file. */
import { join } from 'node:path';

const ENV = { ...process.env, CONTAINERS_CONF: join(import.meta.dir, 'containers.conf') };

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `podman ...args` to its end. */
export async function podman(...args: string[]): Promise<Run> {
  const proc = Bun.spawn(['podman', ...args], { env: ENV, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout: stdout.trim(), stderr: stderr.trim() };
}

/** Runs `podman ...args` and answers its output; throws with podman's message if it fails. */
export async function podmanOk(...args: string[]): Promise<string> {
  const run = await podman(...args);
  if (run.code !== 0) throw new Error(`podman ${args.join(' ')} exited with ${run.code}:\n${run.stderr}\n${run.stdout}`);
  return run.stdout;
}

/**
 * Runs the container's HEALTHCHECK until it passes or `limitMs` passes; answers whether it did.
 * podman's own health timer needs systemd, which these machines do not run.
 */
export async function waitHealthy(container: string, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    if ((await podman('healthcheck', 'run', container)).code === 0) return true;
    const state = await podmanOk('inspect', '--format', '{{.State.Status}}', container);
    if (state !== 'running') return false;
    await Bun.sleep(200);
  }
  return false;
}
