// Keeps credentials out of log lines.

/**
 * Masks `user:password@` in every `redis://` or `rediss://` item of a comma list,
 * so that a Redis URL can be logged.
 */
export function maskCredentialsInUrl(url: string): string {
  return url
    .split(',')
    .map((item) => {
      const at = item.lastIndexOf('@');
      if (at < 0) return item;
      const scheme = /^(rediss?:\/\/)/i.exec(item);
      if (scheme === null) return item;
      return `${scheme[1] ?? ''}*****@${item.slice(at + 1)}`;
    })
    .join(',');
}

/** A secret shown in logs and error messages: only whether it is set. */
export function redact(secret: string): string {
  return secret === '' ? '(unset)' : '(set, hidden)';
}
