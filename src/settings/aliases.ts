// Product-neutral spellings (KVSTORE_*, PUSHSTATS ...) accepted beside the reference's names.

/** Product words in real names and the neutral words that may replace them; order matters. */
const NEUTRAL_WORDS: readonly (readonly [string, string])[] = [
  ['DOG_STATSD', 'TAGGEDPUSH'],
  ['STATSD', 'PUSHSTATS'],
  ['PROMETHEUS', 'PULLSTATS'],
  ['AWS_IAM', 'CLOUD_IAM'],
  ['REDIS', 'KVSTORE'],
  ['MEMCACHE', 'ALTCACHE'],
];

/** Other spellings of one setting, the reference's or neutral ones. */
const EXTRA_ALIASES: Readonly<Record<string, readonly string[]>> = {
  USE_DOG_STATSD_MOGRIFIERS: ['DOG_STATSD_MOGRIFIERS'],
};

/** The neutral spelling of a real name, or undefined when it has no product word. */
export function neutralName(realName: string): string | undefined {
  let out = `_${realName}_`;
  for (const [real, neutral] of NEUTRAL_WORDS) out = out.split(`_${real}_`).join(`_${neutral}_`);
  out = out.slice(1, -1);
  return out === realName ? undefined : out;
}

/** Every name under which a setting may be given, the real name first (it wins). */
export function namesFor(realName: string): readonly string[] {
  const names = [realName];
  for (const extra of [realName, ...(EXTRA_ALIASES[realName] ?? [])]) {
    if (extra !== realName) names.push(extra);
    const neutral = neutralName(extra);
    if (neutral !== undefined) names.push(neutral);
  }
  return names;
}
