// What a debug endpoint is, what the debug listener reads, and its plain-text answers.
import type http from 'node:http';
import type { ConfigSnapshot } from '../../config';
import type { StatsStore } from '../../stats';

/** What the debug listener shows; read at each request. */
export interface DebugSources {
  readonly snapshot: () => ConfigSnapshot | undefined;
  readonly stats: StatsStore;
  readonly health: () => Readonly<Record<string, boolean>>;
}

/** One path of the debug listener; `/` lists every path with its help. */
export interface Endpoint {
  readonly path: string;
  readonly help: string;
  readonly handle: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;
}

export function sendText(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}
