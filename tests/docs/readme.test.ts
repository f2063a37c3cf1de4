import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readEnvFile } from '../../src/config';
import { docSnippet } from '../helpers/doc-snippets';
import { PROJECT_ROOT } from '../helpers/project-root';

test("the README's script tag is the tracker snippet the browser tests run, for a local service", () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const tag = /```html\n(<script[^\n]*<\/script>)\n```/.exec(readme)?.[1];
  const defaults = readEnvFile(join(PROJECT_ROOT, '.env.defaults'));
  expect(tag).toBe(docSnippet('tracker', { collector: `http://localhost:${defaults.PORT}`, publicKey: defaults.PUBLIC_API_KEYS! }));
});
