// Keeps credentials out of log lines.

/**
 * Masks `user:password@` in every item of a comma list (`redis://`, `rediss://`, or a
 * malformed URL alike), so that a Redis URL can be logged or quoted in an error.
 */
export function maskCredentialsInUrl(url: string): string {
  return url
    .split(',')
    .map((item) => {
      const at = item.lastIndexOf('@');
      if (at < 0) return item;
      const scheme = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(item);
      return `${scheme?.[1] ?? ''}*****@${item.slice(at + 1)}`;
    })
    .join(',');
}
