// What the service refuses of Envoy's reports: counted every time, told in the log once a stream.
import type { Logger } from '../lib/logger';
import type { Counter } from '../stats';
import { capSetting, type CapRefusal, type QuotaCap } from './caps';
import type { QuotaStats } from './quota-stats';
import type { RefusedUsage } from './validate';

/** The stream a refusal is about, as the log names it. */
interface RefusedStream {
  readonly id: string;
  readonly peer: string;
}

/**
 * Counts refused usages in `ratelimit.rlqs.usages_refused` and logs at info the first refusal
 * of each stream with its reason, so an Envoy that keeps sending what is refused every 5 s
 * costs one line, not one a tick.
 */
export class UsageRefusals {
  private readonly told = new WeakSet<RefusedStream>();
  /** The bounds each stream was told of in the log. */
  private readonly toldCaps = new WeakMap<RefusedStream, Set<QuotaCap>>();

  constructor(
    private readonly logger: Logger,
    private readonly stats: QuotaStats | undefined,
  ) {}

  note(stream: RefusedStream, reason: string, usages: readonly RefusedUsage[]): void {
    this.stats?.usagesRefused.add(usages.length);
    for (const usage of usages) if (usage.cap !== undefined) this.stats?.refused[usage.cap].inc();
    if (this.told.has(stream)) return;
    this.told.add(stream);
    const what = usages.length === 0 ? 'quota stream refused' : 'quota report usages refused';
    this.logger.info(what, {
      stream: stream.id,
      peer: stream.peer,
      reason,
      ...(usages.length === 0 ? {} : { usages: usages.length }),
    });
  }

  /**
   * `count` of a stream's usages (or ids) a bound refused: counted in `refused.<cap>`, logged
   * at info once per stream and bound, with the setting's name.
   */
  capped(
    stream: RefusedStream,
    refusal: CapRefusal,
    count: number,
    domain?: { readonly bucketsRefused: Counter },
  ): void {
    this.stats?.refused[refusal.cap].add(count);
    // The older name of the per-stream bound's refusals, per domain, stays.
    if (refusal.cap === 'max_buckets_per_stream') domain?.bucketsRefused.add(count);
    let caps = this.toldCaps.get(stream);
    if (caps?.has(refusal.cap) === true) return;
    if (caps === undefined) this.toldCaps.set(stream, (caps = new Set()));
    caps.add(refusal.cap);
    this.logger.info('quota report usages refused by a bound', {
      stream: stream.id,
      peer: stream.peer,
      setting: capSetting(refusal.cap),
      reason: refusal.message,
    });
  }

  /**
   * A domain no rule names: its buckets would only take memory. Envoy reports every bucket on
   * each tick, so once a configuration names the domain they are watched within 5 s.
   */
  unknownDomain(stream: RefusedStream, domain: string, count: number): void {
    const field = 'domain';
    const reason = `${JSON.stringify(domain)} has no quota rules: its buckets are not watched`;
    this.note(stream, `${field}: ${reason}`, Array<RefusedUsage>(count).fill({ field, reason }));
  }
}
