// QuotaRules resources (this project's own type, ratelimit_ts.quota.v1) decoded into the quota
// rules of their domain, and joined to the RateLimitConfig document of the same domain.
import { ConfigError, type ConfigDocument } from '../../config';
import { QUOTA_RULES } from '../../lib/proto';
import { quotaRulesOf, type WireQuotaBucket } from './quota-resource';
import { decodeResource, decodeWire, RATE_LIMIT_CONFIG_TYPE_URL, type WireAny } from './resource';

export const QUOTA_RULES_TYPE_URL = QUOTA_RULES.typeUrl;

interface WireQuotaRules {
  name?: string;
  domain?: string;
  quotaBuckets?: WireQuotaBucket[];
}

/** One QuotaRules resource as a document of its domain with rules and no descriptors. */
export function decodeQuotaRules(resource: WireAny, index: number): ConfigDocument | ConfigError {
  const placeholder = `resource #${index + 1}`;
  const decoded = decodeWire(QUOTA_RULES, resource, placeholder);
  if (decoded instanceof ConfigError) return decoded;
  const wire: WireQuotaRules = decoded;
  const source =
    wire.name === undefined || wire.name === '' ? placeholder : `resource ${wire.name}`;
  const domain = wire.domain ?? '';
  const rules = quotaRulesOf(wire.quotaBuckets ?? [], { domain, source });
  if (rules instanceof ConfigError) return rules;
  return { source, domain, descriptors: [], warnings: [], quotaBuckets: rules };
}

/**
 * Every resource of a response (or of the two types' latest responses together), decoded by
 * its type URL. A QuotaRules document joins the RateLimitConfig document of its domain, its
 * rules after that document's own; a domain with quota rules and no RateLimitConfig is a
 * document of its own, as a file with only quota_buckets is.
 */
export function decodeResources(resources: readonly WireAny[]): (ConfigDocument | ConfigError)[] {
  const out: (ConfigDocument | ConfigError)[] = [];
  const quota: ConfigDocument[] = [];
  resources.forEach((resource, index) => {
    if (resource.type_url === QUOTA_RULES_TYPE_URL) {
      const doc = decodeQuotaRules(resource, index);
      if (doc instanceof ConfigError) out.push(doc);
      else quota.push(doc);
    } else out.push(decodeResource(resource, index));
  });
  for (const doc of quota) {
    const at = out.findIndex((d) => !(d instanceof ConfigError) && d.domain === doc.domain);
    const config = out[at];
    if (config === undefined || config instanceof ConfigError) {
      out.push(doc);
      continue;
    }
    out[at] = {
      ...config,
      quotaBuckets: [...(config.quotaBuckets ?? []), ...(doc.quotaBuckets ?? [])],
    };
  }
  return out;
}

/** The type URLs the ADS stream subscribes to, RateLimitConfig first. */
export const SUBSCRIBED_TYPE_URLS: readonly string[] = Object.freeze([
  RATE_LIMIT_CONFIG_TYPE_URL,
  QUOTA_RULES_TYPE_URL,
]);
