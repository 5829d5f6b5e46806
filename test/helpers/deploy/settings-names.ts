// Which environment names the service reads: what deploy manifests may set.
import { allSettingNames, namesFor } from '../../../src/settings';

/**
 * Names read by a library inside the service rather than by its settings schema: the standard
 * OTLP exporter settings also apply for the tracing destination.
 */
const READ_BY_LIBRARIES = new Set(['OTEL_EXPORTER_OTLP_ENDPOINT']);

let known: Set<string> | undefined;

/** Every name the service reads: the real names, their other spellings, and the exporter's. */
export function readableNames(): Set<string> {
  if (known === undefined) {
    known = new Set(READ_BY_LIBRARIES);
    for (const name of allSettingNames())
      for (const spelling of namesFor(name)) known.add(spelling);
  }
  return known;
}

/** The names of `names` the service does not read. */
export function unreadNames(names: Iterable<string>): string[] {
  const readable = readableNames();
  return [...names].filter((n) => !readable.has(n)).sort();
}
