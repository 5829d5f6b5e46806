// host:port items of REDIS_URL, as the sentinel and cluster clients take them.

/** `host:port` or `[ipv6]:port`; the settings have checked the form already. */
export function parseHostPort(item: string): { host: string; port: number } {
  const colon = item.lastIndexOf(':');
  return {
    host: item.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
    port: Number(item.slice(colon + 1)),
  };
}
