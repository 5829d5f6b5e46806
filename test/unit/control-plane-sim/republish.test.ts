// The simulator's resources from files: a file read again unchanged is not parsed again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfigDirectory } from '../../../control-plane-sim/src/config-files';

it('keeps the resource of an unchanged file, and makes a new one when the file changes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-files-'));
  const file = path.join(dir, 'a.yaml');
  try {
    writeFileSync(file, 'domain: a\ndescriptors:\n  - key: k\n');
    const [first] = readConfigDirectory(dir);
    expect(readConfigDirectory(dir)[0]).toBe(first);
    writeFileSync(file, 'domain: a\ndescriptors:\n  - key: j\n');
    const [changed] = readConfigDirectory(dir);
    expect(changed).not.toBe(first);
    expect(changed?.name).toBe('a');
    expect(Buffer.from(changed?.value ?? []).includes('j')).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
