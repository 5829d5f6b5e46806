// The times the quota service keeps to Envoy's: its report tick, how long an assignment must
// outlive a lost stream, and how long a silent Envoy is remembered.

/**
 * Envoy reports every bucket on one 5 s timer, whatever the reporting_interval it was given
 * (filter_persistence.cc, initTlsStore); a lost stream is started again only at that timer
 * (global_client_impl.cc, onSendReportsTimer).
 */
export const ENVOY_TICK_MS = 5000;

/**
 * For this long after a service starts, an Envoy that comes with a measured report (one that
 * held an assignment from a service before this one: after a restart, Envoy's first message on
 * its new stream is its tick's report, not a 0-second watch) is sent nothing and keeps that
 * assignment. Until every live Envoy has reported once the service cannot know what the others
 * hold: the whole budget to the first to reconnect would add to what the others still enforce.
 */
export const RESTART_HOLD_MS = ENVOY_TICK_MS + 1000;

/** The service's own tick (RLQS_TICK) these bounds count on: its default. */
export const SERVICE_TICK_MS = 1000;

/** Assignments are sent again once this part of their TTL has passed. */
export const REFRESH_AFTER_TTL_PART = 1 / 3;

/**
 * The shortest `assignment_ttl` a rule may have. An assignment is sent again a third of its TTL
 * (and up to a service tick) after the last, so an Envoy always holds one with two thirds of
 * its TTL less a tick to live. When its stream is lost, by a restart of the service, that must
 * outlast the wait for its next tick (5 s), the new process's hold (6 s) and the tick that
 * sends the new share (1 s): 2/3 × TTL − 1 s ≥ 12 s, so 19.5 s, rounded up to whole seconds as
 * Envoy reads them. Below it, an Envoy's assignment runs out in every restart, and Envoy builds
 * a new full bucket at the next one: a burst the budget does not hold.
 */
export const MIN_ASSIGNMENT_TTL_MS = 20_000;

/**
 * The longest `assignment_ttl` a rule may have, as long as the default ever is (three
 * reporting intervals of at most 10 minutes): an Envoy keeps its last assignment that long
 * after the service is gone, and a silent Envoy holds its share that long.
 */
export const MAX_ASSIGNMENT_TTL_MS = 1_800_000;

/**
 * A watcher is forgotten (sent abandon_action, its share freed) only once it has been silent
 * for longer than its assignment's TTL and than this: two of Envoy's ticks missed, and a third
 * interval as a margin for a late report and the service's tick. What the TTL is does not
 * matter: an Envoy that still reports is never forgotten.
 */
export const MIN_FORGET_MS = 3 * ENVOY_TICK_MS;
