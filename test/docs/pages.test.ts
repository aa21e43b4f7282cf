/**
 * The docs a newcomer navigates: the README is a front page that links every topic page, each
 * topic page opens with a table of contents that matches its headings, and no relative link in
 * them points at a file or heading that is not there.
 */
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headings, readDoc, relativeLinks, repoRoot } from './markdown';

const TOPICS = [
  'docs/local-host.md',
  'docs/github.md',
  'docs/cli.md',
  'docs/configuration.md',
  'docs/api.md',
  'docs/reviews.md',
  'docs/operations.md',
  'docs/eval.md',
  'docs/console.md',
  'docs/development.md',
];
const PAGES = ['README.md', ...TOPICS, 'docs/architecture.md'];

/** The `- [text](#anchor)` entries of a page's "Contents" section. */
function contents(markdown: string): string[] {
  const section = markdown.split(/^## Contents\n/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\s*- \[[^\]]+\]\(#([^)]+)\)/gm)].map((m) => m[1] ?? '');
}

describe('the docs', () => {
  it('link every topic page from the README', () => {
    const links = relativeLinks(readDoc('README.md'));
    for (const topic of TOPICS)
      expect(
        links.some((link) => link.split('#')[0] === topic),
        topic,
      ).toBe(true);
  });

  it.each(['README.md', ...TOPICS])('%s opens with a table of contents of its own sections', (page) => {
    const markdown = readDoc(page);
    const sections = headings(markdown)
      .filter((h) => h.level === 2 && h.text !== 'Contents')
      .map((h) => h.anchor);
    const listed = contents(markdown);
    // Every section is listed, in order; subsections may be listed too.
    expect(listed.filter((anchor) => sections.includes(anchor))).toEqual(sections);
    const anchors = headings(markdown).map((h) => h.anchor);
    expect(listed.filter((anchor) => !anchors.includes(anchor))).toEqual([]);
  });

  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    const broken = relativeLinks(readDoc(page)).filter((link) => {
      const [file = '', anchor] = link.split('#');
      const target = file === '' ? page : normalize(join(dirname(page), file));
      if (!existsSync(join(repoRoot, target))) return true;
      if (anchor === undefined || !target.endsWith('.md')) return false;
      return !headings(readDoc(target)).some((h) => h.anchor === anchor);
    });
    expect(broken).toEqual([]);
  });
});
