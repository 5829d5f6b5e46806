// The token bucket (GCRA) step every backend runs on its TAT key; Redis runs the same in Lua.
import type { TokenBucketChange, TokenBucketState } from './counter-store';

/** The state a bucket step leaves: the TAT to keep (0 to drop the key) and the answer. */
export type TokenBucketStep = TokenBucketState;

/**
 * One step on the stored TAT (`storedUs`, 0 when the key is absent). Admits when
 * `max(TAT, now) + hits·emission − now ≤ tolerance` and moves the TAT there; a refusal leaves it.
 * A refund moves the TAT back, never below now; a TAT at or before now is a full bucket, kept
 * as no key at all. Integer microseconds in, integer microseconds out.
 */
export function tokenBucketStep(storedUs: number, change: TokenBucketChange): TokenBucketStep {
  const now = change.nowUs;
  const cost = change.hits * change.emissionUs;
  if (change.isNegative) {
    if (storedUs === 0) return { isAdmitted: true, tatUs: 0 };
    const back = Math.max(storedUs - cost, now);
    return { isAdmitted: true, tatUs: back <= now ? 0 : back };
  }
  const next = Math.max(storedUs, now) + cost;
  if (next - now > change.toleranceUs) return { isAdmitted: false, tatUs: storedUs };
  if (change.hits === 0) return { isAdmitted: true, tatUs: storedUs };
  return { isAdmitted: true, tatUs: next };
}

/**
 * The same step in Lua for Redis: KEYS[1] the TAT key; ARGV now, emission, tolerance, hits,
 * 1 for a refund. Returns {admitted 0/1, TAT}. The key expires when its bucket is full again.
 * Numbers are written with %.0f: Lua's default formatting would round microsecond times.
 */
export const TOKEN_BUCKET_LUA = `
local stored = tonumber(redis.call('GET', KEYS[1]) or '0')
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[4]) * tonumber(ARGV[2])
local function keep(tat)
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', string.format('%.0f', math.ceil((tat - now) / 1000)))
end
if ARGV[5] == '1' then
  if stored == 0 then return {1, 0} end
  local back = math.max(stored - cost, now)
  if back <= now then
    redis.call('DEL', KEYS[1])
    return {1, 0}
  end
  keep(back)
  return {1, back}
end
local nxt = math.max(stored, now) + cost
if nxt - now > tonumber(ARGV[3]) then return {0, stored} end
if cost == 0 then return {1, stored} end
keep(nxt)
return {1, nxt}
`;
