// The service's name and version, as the xDS node and the client report them.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

function readVersion(): string {
  for (const up of ['..', '../..', '../../..']) {
    const file = path.resolve(__dirname, up, 'package.json');
    if (!existsSync(file)) continue;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (parsed.name === 'ratelimit-ts' && typeof parsed.version === 'string') return parsed.version;
  }
  return '0.0.0';
}

export const SERVICE_NAME = 'ratelimit-ts';
export const SERVICE_VERSION: string = readVersion();
