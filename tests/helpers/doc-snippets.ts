import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root';

/** The user documentation whose snippets the browser tests run, as written. */
const DOC = join(PROJECT_ROOT, 'docs', 'browsers.md');

/** The placeholders of the snippets, replaced by the test's service and key. */
export interface SnippetValues {
  /** The service's URL, for `https://collector.example`. */
  collector: string;
  /** A public key, for `PUBLIC_KEY`. */
  publicKey: string;
}

/** The code block that follows `<!-- snippet: name -->` in docs/browsers.md, with the test's values in it. */
export function docSnippet(name: string, values: SnippetValues): string {
  const doc = readFileSync(DOC, 'utf8');
  const match = new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!match) throw new Error(`docs/browsers.md has no snippet named ${name}`);
  return match[1]!.replaceAll('https://collector.example', values.collector).replaceAll('PUBLIC_KEY', values.publicKey);
}

/**
 * A snippet that imports an npm package (an SDK), bundled for a page as Bun would for an app. The
 * entry is written below node_modules, so the package resolves from the project.
 */
export async function bundleSnippet(name: string, code: string): Promise<string> {
  const dir = join(PROJECT_ROOT, 'node_modules', '.cache', 'browser-tests');
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, `${name}.js`);
  writeFileSync(entry, code);
  const result = await Bun.build({ entrypoints: [entry], target: 'browser', format: 'iife' });
  if (!result.success) throw new AggregateError(result.logs, `snippet ${name} did not bundle`);
  return result.outputs[0]!.text();
}
