// Where a configuration came from, as a log line tells it.
import type { ConfigOrigin } from './types';

/** The fields a refusal's log line carries about where the update came from. */
export function originFields(origin: ConfigOrigin | undefined): Record<string, string> {
  return origin?.kind === 'xds' ? { version: origin.version } : {};
}
