// The web pages of the debug listener and the simulator's admin (web/): plain HTML, CSS and
// script files, read once and served as they are, with no build step and nothing external.
import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

/** The web/ folder, found from src/lib (tests) or dist/src/lib (the build), as api/ is. */
export const WEB_DIR: string =
  [
    path.resolve(__dirname, '..', '..', 'web'),
    path.resolve(__dirname, '..', '..', '..', 'web'),
  ].find((dir) => existsSync(path.join(dir, 'common.css'))) ??
  path.resolve(__dirname, '..', '..', 'web');

/** Where pages fetch their files from: `/ui/<file>` on both listeners. */
export const ASSET_PREFIX = '/ui/';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/**
 * Pages load their own files and talk to their own listener only; nothing inline, nothing
 * from elsewhere, and no framing by other sites.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
} as const;

export interface WebAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/**
 * Reads the named files of web/ once. A file that cannot be read is left out and named in
 * `missing`, so a listener serves what it has instead of failing to start over a page.
 */
export function loadWebAssets(names: readonly string[]): {
  readonly assets: ReadonlyMap<string, WebAsset>;
  readonly missing: readonly string[];
} {
  const assets = new Map<string, WebAsset>();
  const missing: string[] = [];
  for (const name of names) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    const file = path.join(WEB_DIR, name);
    if (contentType === undefined || !existsSync(file)) {
      missing.push(name);
      continue;
    }
    assets.set(name, { contentType, body: readFileSync(file) });
  }
  return { assets, missing };
}

export function sendAsset(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  asset: WebAsset,
): void {
  res.writeHead(200, {
    'Content-Type': asset.contentType,
    'Content-Length': asset.body.length,
    'Cache-Control': 'no-cache',
    ...SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}

/** True when the client lists text/html among what it accepts (a browser), not for curl's `*\/*`. */
export function acceptsHtml(req: http.IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return accept.split(',').some((type) => type.trim().split(';')[0]?.trim() === 'text/html');
}
