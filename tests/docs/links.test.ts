import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { PROJECT_ROOT } from '../helpers/project-root';

/**
 * Every relative link of README.md and docs/**\/*.md resolves: the file or folder exists, and a
 * `#anchor` names a heading of the target Markdown file by GitHub's slug rules. Links with a
 * scheme (http, https, mailto, ...) are not followed.
 */

/** The Markdown files the test covers, relative to the project root. */
function markdownFiles(): string[] {
  const docs = join(PROJECT_ROOT, 'docs');
  const found = readdirSync(docs, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.md'))
    .map((path) => join('docs', path));
  return ['README.md', ...found.sort()];
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function proseLines(text: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    out.push({ line, number: i + 1 });
  });
  return out;
}

/** A heading's text as GitHub renders it: inline code, links, emphasis and HTML reduced to text. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '') // closing hashes
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`([^`]*)`/g, '$1') // code spans: their content
    .replace(/(\*\*|__|\*)(?=\S)([^*]*?\S)\1/g, '$2'); // emphasis
}

/** GitHub's heading anchor (github-slugger): lowercase, punctuation dropped except - and _, each space a -. */
function slug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; repeated headings get -1, -2, ... as on GitHub. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(headingText(heading[1]!));
    let anchor = base;
    const count = seen.get(base) ?? 0;
    if (count > 0) anchor = `${base}-${count}`;
    seen.set(base, count + 1);
    anchors.add(anchor);
  }
  return anchors;
}

/** The link targets of a Markdown file (inline links, images, reference definitions), outside code. */
function linksOf(text: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, ''); // inline code holds no links
    for (const m of prose.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: m[1]!.replace(/^<|>$/g, ''), line: number });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose);
    if (definition) links.push({ target: definition[1]!.replace(/^<|>$/g, ''), line: number });
  }
  return links;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) {
    anchors = anchorsOf(readFileSync(path, 'utf8'));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** Why a link does not resolve, or undefined when it does. */
function brokenReason(fromFile: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http:, https:, mailto:, ...
  if (target.startsWith('//')) return undefined;
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  if (pathPart.startsWith('/')) return 'absolute paths do not resolve on GitHub; use a relative link';
  const file = pathPart === '' ? fromFile : resolve(dirname(fromFile), pathPart);
  if (relative(PROJECT_ROOT, file).startsWith('..')) return 'points outside the repository';
  if (!existsSync(file)) return `no such file: ${relative(PROJECT_ROOT, file)}`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} on a file that is not Markdown`;
  if (!anchorsOfFile(file).has(anchor)) return `no heading with the anchor #${anchor} in ${relative(PROJECT_ROOT, file)}`;
  return undefined;
}

describe('documentation links', () => {
  const files = markdownFiles();

  test('README.md and the docs folder are covered', () => {
    expect(files).toContain('README.md');
    expect(files).toContain(join('docs', 'README.md'));
    expect(files.length).toBeGreaterThan(5);
  });

  test('every relative link resolves, anchors included', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      const path = join(PROJECT_ROOT, file);
      for (const { target, line } of linksOf(readFileSync(path, 'utf8'))) {
        checked++;
        const reason = brokenReason(path, target);
        if (reason) broken.push(`${file}:${line}: ${target}: ${reason}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  test('the README links into docs/', () => {
    const targets = linksOf(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')).map((l) => l.target);
    expect(targets.some((t) => t.startsWith('docs/'))).toBe(true);
  });
});

describe('GitHub heading anchors', () => {
  test('lowercase, punctuation dropped except - and _, spaces become -', () => {
    expect(slug('Getting started')).toBe('getting-started');
    expect(slug('De-duplication by messageId')).toBe('de-duplication-by-messageid');
    expect(slug('POST /events')).toBe('post-events');
    expect(slug('GET /webhooks/{uuid}/deliveries')).toBe('get-webhooksuuiddeliveries');
    expect(slug('Limits (and why)')).toBe('limits-and-why');
    expect(slug('INGEST_FSYNC: on or off?')).toBe('ingest_fsync-on-or-off');
    expect(slug('A — B')).toBe('a--b');
    expect(slug('Données à jour')).toBe('données-à-jour');
  });

  test('inline code, links and emphasis count by their text', () => {
    expect(anchorsOf('## `POST /events`\n### The `events` table\n## [Webhooks](x.md) **now**\n')).toEqual(
      new Set(['post-events', 'the-events-table', 'webhooks-now']),
    );
  });

  test('repeated headings get -1, -2; headings in code blocks do not count', () => {
    const text = '# Notes\n## Notes\n```sh\n# Notes\n```\n## Notes\n~~~\n## Hidden\n~~~\n';
    expect(anchorsOf(text)).toEqual(new Set(['notes', 'notes-1', 'notes-2']));
  });

  test('links in code spans and code blocks are not links', () => {
    const text = 'See [a](a.md#x) and `[b](b.md)`.\n```md\n[c](c.md)\n```\n[ref]: d.md\n![img](e.png "title")\n';
    expect(linksOf(text).map((l) => l.target)).toEqual(['a.md#x', 'd.md', 'e.png']);
  });

  test('a broken link is reported', () => {
    const from = join(PROJECT_ROOT, 'README.md');
    expect(brokenReason(from, 'docs/no-such-page.md')).toContain('no such file');
    expect(brokenReason(from, 'docs/README.md#no-such-heading')).toContain('no heading');
    expect(brokenReason(from, '#no-such-heading')).toContain('no heading');
    expect(brokenReason(from, 'https://example.com/#anything')).toBeUndefined();
    expect(brokenReason(from, 'mailto:someone@example.com')).toBeUndefined();
  });
});
