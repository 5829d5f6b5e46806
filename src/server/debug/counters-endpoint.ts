// GET /counters?domain=D&descriptor=k1=v1,k2=v2 (descriptor repeatable): the counters those
// descriptors feed, read from the backend without counting.
import type { DescriptorEntry } from '../../config';
import type { CounterReading, DescriptorReading } from '../../engine';
import { describeError } from '../../lib/errors';
import { isoTime, sendError, sendJson, type DebugSources, type Endpoint } from './endpoint';
import { descriptorText, entriesJson, limitJson, ruleJson } from './rule-json';

/** More descriptors than anyone types into a form; a bound on one query's store read. */
export const MAX_DESCRIPTORS = 100;
const PARAMETERS = new Set(['domain', 'descriptor']);

export type CountersQuery =
  | { readonly ok: true; readonly domain: string; readonly descriptors: DescriptorEntry[][] }
  | { readonly ok: false; readonly reason: string };

/**
 * Splits `k1=v1,k2=v2` into entries; `\,`, `\=` and `\\` stand for themselves, so any key or
 * value can be written. Returns the reason when the text is not a descriptor.
 */
export function parseDescriptor(text: string): DescriptorEntry[] | string {
  if (text === '') return 'a descriptor is empty: write descriptor=k1=v1,k2=v2';
  const entries: DescriptorEntry[] = [];
  let key: string | undefined;
  let part = '';
  const endEntry = (): string | undefined => {
    if (key === undefined)
      return `descriptor entry ${JSON.stringify(part)} has no '=': write key=value`;
    if (key === '') return `a descriptor entry has an empty key in ${JSON.stringify(text)}`;
    entries.push({ key, value: part });
    key = undefined;
    part = '';
    return undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '\\' && i + 1 < text.length) part += text.charAt(++i);
    else if (c === '=' && key === undefined) {
      key = part;
      part = '';
    } else if (c === ',') {
      const problem = endEntry();
      if (problem !== undefined) return problem;
    } else part += c;
  }
  const problem = endEntry();
  return problem ?? entries;
}

/** Reads the query; every problem is a sentence for a 400. */
export function parseCountersQuery(params: URLSearchParams): CountersQuery {
  for (const name of params.keys()) {
    if (!PARAMETERS.has(name))
      return {
        ok: false,
        reason: `unknown parameter ${JSON.stringify(name)}; /counters takes domain=D and one or more descriptor=k1=v1,k2=v2`,
      };
  }
  const domains = params.getAll('domain');
  const domain = domains[0];
  if (domains.length !== 1 || domain === undefined || domain === '')
    return { ok: false, reason: 'domain is required, once: /counters?domain=D&descriptor=k=v' };
  const texts = params.getAll('descriptor');
  if (texts.length === 0)
    return { ok: false, reason: 'at least one descriptor=k1=v1,k2=v2 is required' };
  if (texts.length > MAX_DESCRIPTORS)
    return { ok: false, reason: `at most ${MAX_DESCRIPTORS} descriptors in one query` };
  const descriptors: DescriptorEntry[][] = [];
  for (const text of texts) {
    const parsed = parseDescriptor(text);
    if (typeof parsed === 'string') return { ok: false, reason: parsed };
    descriptors.push(parsed);
  }
  return { ok: true, domain, descriptors };
}

function counterJson(counter: CounterReading) {
  return {
    ...limitJson(counter),
    key: counter.key,
    count: counter.count,
    remaining: counter.remaining,
    windowStart: isoTime(counter.windowStartSeconds * 1000),
    windowEnd: isoTime(counter.windowEndSeconds * 1000),
    resetInSeconds: counter.resetSeconds,
    inLocalCache: counter.isInLocalCache,
    ...(counter.sliding === undefined
      ? {}
      : {
          previousKey: counter.sliding.previousKey,
          previousCount: counter.sliding.previousCount,
          estimate: counter.sliding.estimate,
        }),
    ...(counter.tatUs === undefined
      ? {}
      : { theoreticalArrival: counter.tatUs === 0 ? null : isoTime(counter.tatUs / 1000) }),
  };
}

function readingJson(reading: DescriptorReading) {
  return {
    descriptor: entriesJson(reading.entries),
    descriptorText: descriptorText(reading.entries),
    rule: reading.rule === undefined ? null : ruleJson(reading.rule),
    counters: reading.counters.map(counterJson),
  };
}

export function countersEndpoint(sources: DebugSources): Endpoint {
  return {
    path: '/counters',
    help: 'JSON: ?domain=D&descriptor=k1=v1,k2=v2 (repeatable): the counters those descriptors feed, read without counting',
    handle: (_req, res, url) => {
      const query = parseCountersQuery(url.searchParams);
      if (!query.ok) {
        sendError(res, 400, query.reason);
        return;
      }
      sources.engine.readCounters(query.domain, query.descriptors).then(
        (lookup) => {
          if (lookup.ok) {
            sendJson(res, 200, {
              domain: lookup.domain,
              descriptors: lookup.descriptors.map(readingJson),
            });
          } else if (lookup.reason === 'unknown-domain') {
            const known = sources.engine.currentSnapshot?.domains ?? [];
            sendError(
              res,
              404,
              `domain ${JSON.stringify(query.domain)} is not configured; loaded domains: ${known.join(', ') || '(none)'}`,
            );
          } else sendError(res, 503, 'no configuration is loaded yet');
        },
        (err: unknown) => {
          sendError(res, 503, `the counter backend did not answer: ${describeError(err)}`);
        },
      );
    },
  };
}
