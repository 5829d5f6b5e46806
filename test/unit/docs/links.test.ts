// Every link between the repository's documents points at a file that exists and, with an
// anchor, at a heading that file has; the README stays a front page and lists the documents.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DOCUMENTS = [
  'README.md',
  'CHANGELOG.md',
  'deploy/README.md',
  'control-plane-sim/README.md',
  'examples/envoy/README.md',
  'deploy/kubernetes/overlays/redis-sentinel/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] ?? '')));
}

/** The targets of a document's Markdown links, outside code blocks. */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
}

it.each(DOCUMENTS.map((d) => [d]))('%s links only to what exists', (doc) => {
  const file = path.join(ROOT, doc);
  const broken: string[] = [];
  for (const target of links(readFileSync(file, 'utf8'))) {
    if (/^(https?|mailto):/.test(target)) continue;
    const [where, anchor] = target.split('#') as [string, string | undefined];
    const linked = where === '' ? file : path.resolve(path.dirname(file), where);
    if (!existsSync(linked)) broken.push(`${target}: no such file`);
    else if (anchor !== undefined && linked.endsWith('.md') && !anchors(linked).has(anchor))
      broken.push(`${target}: no such heading`);
  }
  expect(broken).toEqual([]);
});

it('keeps the README a front page: contents first, under 600 lines, none over 200 characters', () => {
  const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
  expect(lines.length).toBeLessThan(600);
  expect(lines.filter((l) => l.length > 200)).toEqual([]);
  const headings = lines.filter((l) => l.startsWith('## '));
  expect(headings.slice(0, 3)).toEqual(['## Contents', '## Set-up', '## Try it']);
});

it("lists every operator's document of docs/ in the README's Documentation section", () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const listed = new Set(links(readme.slice(readme.indexOf('\n## Documentation\n'))));
  // The logs are linked from their reports; the style guide is for contributors.
  const notForOperators = new Set(['performance-log.md', 'reliability-log.md', 'style.md']);
  const unlisted = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && !notForOperators.has(f))
    .filter((f) => !listed.has(`docs/${f}`));
  expect(unlisted).toEqual([]);
});
