// What the repository promises a newcomer, checked over its own files: the documents it cites
// are its own, no tracker outside it is referred to, the performance and reliability reports stay
// reports, the choices a newcomer would question have their records, and the engine has one decision path.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const TEXT = /\.(ts|mjs|cjs|js|md|ya?ml|json|html|sh|proto)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'bench-results', 'coverage', '.git']);

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return filesUnder(rel);
    return TEXT.test(name) ? [rel] : [];
  });
}

const OWN = [
  ...['src', 'test', 'docs', 'bench', 'control-plane-sim', 'deploy', 'scripts', 'web', '.ci']
    .flatMap(filesUnder)
    .filter((f) => f !== path.join('test', 'unit', 'docs', 'repository-rules.test.ts')),
  'README.md',
  'CHANGELOG.md',
  '.dependency-cruiser.cjs',
];

const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

/** The files whose text matches `pattern`, with the first match. */
function citing(files: readonly string[], pattern: RegExp): string[] {
  return files.flatMap((file) => {
    const match = pattern.exec(read(file));
    return match === null ? [] : [`${file}: ${match[0]}`];
  });
}

it('cites no document that lives outside the repository', () => {
  expect(OWN.length).toBeGreaterThan(300); // the scan reached the tree
  expect(citing(OWN, /\b(STYLE|WIRE|COMPAT)\.md\b|\.\.\/shared\//)).toEqual([]);
});

it('refers to no issue of a tracker the repository does not contain', () => {
  expect(citing(OWN, /\bissues? #?\d+\b|\(#\d+\)/i)).toEqual([]);
});

it('keeps docs/performance.md a report of under 400 lines', () => {
  expect(read('docs/performance.md').split('\n').length).toBeLessThan(400);
});

it('keeps docs/reliability.md a report: one run per section, the history in the log', () => {
  const report = read('docs/reliability.md');
  // A section (## or ###) reports its latest run; earlier runs go to docs/reliability-log.md.
  const runsPerSection = report
    .split(/^#{2,3} /m)
    .map((section) => ({
      section: section.split('\n')[0],
      runs: (section.match(/^\*\*(Earlier )?figures\b/gim) ?? []).length,
    }))
    .filter(({ runs }) => runs > 1);
  expect(runsPerSection).toEqual([]);
  expect(report).toContain('](reliability-log.md');
});

it('has a decision record for each choice a newcomer would question', () => {
  const records = readdirSync(path.join(ROOT, 'docs', 'decisions'));
  expect(records).toEqual(
    expect.arrayContaining([
      'own-http2-and-protobuf.md',
      'memory-counter-table.md',
      'redis-batch-command.md',
      'deadline-queue.md',
    ]),
  );
});

it('has one decision path: no synchronous *Now twin in the engine or the stores', () => {
  const code = ['src/engine', 'src/store'].flatMap(filesUnder);
  expect(citing(code, /\b[a-z]\w*Now\b|\bimmediate\?/)).toEqual([]);
});

it('uses the stores’ libraries through their types: no `as unknown as` in src/store', () => {
  expect(citing(filesUnder('src/store'), /as unknown as/)).toEqual([]);
});
