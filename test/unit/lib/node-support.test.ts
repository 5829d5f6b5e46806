// Which Node.js releases the commands accept, read from package.json's own engines.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { engineLines, nodeVerdict, packageEngines } from '../../../src/lib/node-support';

const ENGINES = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
    engines: { node: string };
  }
).engines.node;

describe('engines', () => {
  it("reads package.json's engines, the range npm checks", () => {
    expect(packageEngines()).toBe(ENGINES);
    expect(engineLines(ENGINES).length).toBeGreaterThanOrEqual(1);
  });

  it('fails on a form it does not read, rather than accept every Node', () => {
    expect(() => engineLines('>=24')).toThrow(/not \^x\.y\.z/);
  });
});

describe('nodeVerdict for ^24.22.0 || ^26.12.0', () => {
  const range = '^24.22.0 || ^26.12.0';

  it.each(['v24.22.0', 'v24.30.1', 'v26.12.0', 'v26.13.4'])('runs on %s', (version) => {
    expect(nodeVerdict(version, range).kind).toBe('supported');
  });

  it.each(['v20.20.2', 'v22.11.0', 'v24.21.9'])(
    'refuses %s, older than the oldest named, naming engines',
    (version) => {
      const verdict = nodeVerdict(version, range);
      expect(verdict.kind).toBe('refuse');
      expect(verdict).toMatchObject({ message: expect.stringContaining('"engines"') as string });
      expect(verdict).toMatchObject({ message: expect.stringContaining(version) as string });
    },
  );

  it.each(['v25.0.0', 'v26.3.0', 'v27.1.0', 'v28.0.0'])(
    'warns on %s, newer than the oldest named but not named',
    (version) => {
      const verdict = nodeVerdict(version, range);
      expect(verdict.kind).toBe('warn');
      expect(verdict).toMatchObject({ message: expect.stringContaining('"engines"') as string });
    },
  );
});
