// The cardinality guard: statistics keys built from request values, within a count and a byte
// budget, released once their counters stop moving.
import type { Counter } from './metrics';

/** A key built from request values, and how long it has been idle. */
interface RuntimeKey {
  readonly bytes: number;
  /** A rule key (seven counters) or a counter of its own (an unknown domain). */
  readonly isRule: boolean;
  readonly counters: readonly Counter[];
  /** The sum of its counters at the last check, and how many checks in a row it held. */
  total: number;
  idleChecks: number;
}

/** The keys built from request values, and the room they take. */
export class RuntimeKeys {
  private readonly keys = new Map<string, RuntimeKey>();
  private heldBytes = 0;
  private rules = 0;

  /** @param maxBytes STATS_MAX_RUNTIME_KEY_BYTES: most UTF-8 bytes of keys held. */
  constructor(readonly maxBytes: number) {}

  /** Keys held, rule keys and counters together. */
  get size(): number {
    return this.keys.size;
  }

  /** Rule keys held. */
  get ruleKeys(): number {
    return this.rules;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Whether `bytes` more fit the byte budget (the caller checks the count). */
  fitsBytes(bytes: number): boolean {
    return this.heldBytes + bytes <= this.maxBytes;
  }

  add(key: string, bytes: number, isRule: boolean, counters: readonly Counter[]): void {
    this.keys.set(key, { bytes, isRule, counters, total: 0, idleChecks: 0 });
    this.heldBytes += bytes;
    if (isRule) this.rules += 1;
  }

  /** Stops guarding `key` (released, or configured from now on). */
  remove(key: string): void {
    const entry = this.keys.get(key);
    if (entry === undefined) return;
    this.keys.delete(key);
    this.heldBytes -= entry.bytes;
    if (entry.isRule) this.rules -= 1;
  }

  /**
   * The keys whose counters have not moved for `idleChecks` calls in a row, removed from the
   * guard; the caller removes their counters.
   */
  takeIdle(idleChecks: number): { key: string; isRule: boolean }[] {
    const idle: { key: string; isRule: boolean }[] = [];
    for (const [key, entry] of this.keys) {
      let total = 0;
      for (const counter of entry.counters) total += counter.value;
      if (total !== entry.total) {
        entry.total = total;
        entry.idleChecks = 0;
        continue;
      }
      entry.idleChecks += 1;
      if (entry.idleChecks < idleChecks) continue;
      this.remove(key);
      idle.push({ key, isRule: entry.isRule });
    }
    return idle;
  }
}
