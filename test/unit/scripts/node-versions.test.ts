// The supported Node.js majors are named in six places that must agree: package.json `engines`,
// the releases scripts/node-major.sh pins, the majors .ci/run tests, the image
// (deploy/Dockerfile), `@types/node` (the oldest supported), and the README's Set-up.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

/** `^24.22.0 || ^26.12.0` → [[24, 22], [26, 12]]; anything else in engines fails the test. */
function engineRanges(): [number, number][] {
  return pkg.engines.node.split('||').map((range) => {
    const match = /^\^(\d+)\.(\d+)\.0$/.exec(range.trim());
    if (match === null) throw new Error(`engines.node: "${range.trim()}" is not ^MAJOR.MINOR.0`);
    return [Number(match[1]), Number(match[2])];
  });
}

/** The release scripts/node-major.sh pins for each major. */
function pinned(): Map<number, string> {
  const pins = new Map<number, string>();
  for (const [, major, version] of read('scripts/node-major.sh').matchAll(
    /^\s*(\d+)\) version=(\d+\.\d+\.\d+) ;;$/gm,
  ))
    pins.set(Number(major), version ?? '');
  return pins;
}

function ciMajors(): { image: number; others: number[] } {
  const run = read('.ci/run');
  const image = /^image_major=(\d+)$/m.exec(run)?.[1];
  const others = /^other_majors=\(([\d ]*)\)$/m.exec(run)?.[1];
  if (image === undefined || others === undefined) throw new Error('.ci/run names no majors');
  return { image: Number(image), others: others.trim().split(/\s+/).map(Number) };
}

const ranges = engineRanges();
const majors = ranges.map(([major]) => major).sort((a, b) => a - b);
const newest = majors.at(-1) ?? 0;

it('engines names exactly the majors .ci/run tests, the image on the newest', () => {
  const ci = ciMajors();
  expect([ci.image, ...ci.others].sort((a, b) => a - b)).toEqual(majors);
  expect(ci.image).toBe(newest);
});

it('scripts/node-major.sh pins a release of each that engines admits', () => {
  const pins = pinned();
  expect([...pins.keys()].sort((a, b) => a - b)).toEqual(majors);
  for (const [major, minor] of ranges) {
    const [pinMajor, pinMinor] = (pins.get(major) ?? '').split('.').map(Number);
    expect(pinMajor).toBe(major);
    expect(pinMinor).toBeGreaterThanOrEqual(minor);
  }
});

it('the image is the release CI tests the whole suite on', () => {
  const images = [...read('deploy/Dockerfile').matchAll(/^FROM node:(\d+\.\d+\.\d+)-/gm)].map(
    (m) => m[1],
  );
  expect(images.length).toBeGreaterThanOrEqual(2);
  for (const image of images) expect(image).toBe(pinned().get(newest));
});

it('@types/node is the oldest supported major, and the README says which Node to use', () => {
  expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${String(majors[0])}\\.`));
  const setUp = read('README.md').split('## Set-up')[1]?.split('```')[0] ?? '';
  for (const [major, minor] of ranges)
    expect(setUp.replace(/\s+/g, ' ')).toContain(
      `${String(major)}.${String(minor)} or later on the ${String(major)} line`,
    );
});
