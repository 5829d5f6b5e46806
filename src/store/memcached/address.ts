// `host:port` of a memcached server, as MEMCACHE_HOST_PORT and SRV answers spell it.

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Parses `host:port` or `[ipv6]:port`; undefined when it is neither. */
export function parseHostPort(text: string): HostPort | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  // A resolved SRV target ends with the root's dot; the socket layer wants the plain name.
  const host = match[1] ?? (match[2] ?? '').replace(/\.$/, '');
  return host === '' ? undefined : { host, port };
}
