// MEMCACHE_SRV: the server list from a DNS SRV record, in the order the reference gives its client.
import { promises as dns } from 'node:dns';

/** One SRV answer: a target host name and its port. */
export interface SrvRecord {
  readonly name: string;
  readonly port: number;
}

/** Looks up the SRV records of a full name (`_service._proto.name`); injected in tests. */
export type SrvResolver = (srvName: string) => Promise<readonly SrvRecord[]>;

export const dnsSrvResolver: SrvResolver = (srvName) => dns.resolveSrv(srvName);

/** The reference's reading of an SRV name: `_service._proto.name`. */
const SRV_NAME = /^_(.+?)\._(.+?)\.(.+)$/;

export function isSrvName(text: string): boolean {
  return SRV_NAME.test(text);
}

/**
 * The servers of an SRV answer as `host:port`, sorted as the reference sorts them: its resolver
 * returns each target as a fully qualified name with the trailing dot, and the client picks a
 * server by position, so the order must match for both services to choose the same server.
 */
export function serverAddresses(records: readonly SrvRecord[]): string[] {
  const addresses = records.map((r) => `${r.name.endsWith('.') ? r.name : `${r.name}.`}:${r.port}`);
  // Go's sort.Strings compares bytes; for the ASCII of host names that is code-unit order.
  return addresses.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Resolves an SRV name to its sorted servers; rejects when the lookup fails or finds none. */
export async function resolveServers(srvName: string, resolver: SrvResolver): Promise<string[]> {
  if (!isSrvName(srvName)) throw new Error(`could not parse ${srvName} to SRV parts`);
  const records = await resolver(srvName);
  if (records.length === 0) throw new Error(`the SRV record ${srvName} lists no servers`);
  return serverAddresses(records);
}
