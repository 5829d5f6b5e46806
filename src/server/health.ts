// Overall health from its components: backend connection, configuration, termination signal.

export type HealthComponent = 'backend' | 'config' | 'sigterm';

/**
 * Healthy only when every enabled component is healthy (SPEC.md "States and transitions").
 * The backend starts healthy, the configuration (when enabled) unhealthy, sigterm healthy.
 */
export class HealthState {
  private readonly components = new Map<HealthComponent, boolean>();
  /** Each backend instance's circuit breaker state (BACKEND_FAILURE_*), by instance. */
  private readonly breakers = new Map<string, string>();
  private readonly isBreakerHealth: boolean;
  private readonly listeners: ((isHealthy: boolean) => void)[] = [];
  private lastHealthy: boolean;

  constructor(options: {
    readonly requireConfig: boolean;
    /** A breaker that is not closed makes the service unhealthy (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION). */
    readonly breakerAffectsHealth?: boolean;
  }) {
    this.isBreakerHealth = options.breakerAffectsHealth ?? false;
    this.components.set('backend', true);
    if (options.requireConfig) this.components.set('config', false);
    this.components.set('sigterm', true);
    this.lastHealthy = this.isHealthy();
  }

  isHealthy(): boolean {
    for (const healthy of this.components.values()) if (!healthy) return false;
    if (this.isBreakerHealth)
      for (const state of this.breakers.values()) if (state !== 'closed') return false;
    return true;
  }

  /** Sets a component; components not enabled at construction are ignored. */
  set(component: HealthComponent, isHealthy: boolean): void {
    if (!this.components.has(component)) return;
    this.components.set(component, isHealthy);
    this.changed();
  }

  /** Records a backend instance's breaker state; it counts for health only when configured so. */
  setBreaker(instance: string, state: string): void {
    this.breakers.set(instance, state);
    this.changed();
  }

  private changed(): void {
    const now = this.isHealthy();
    if (now === this.lastHealthy) return;
    this.lastHealthy = now;
    for (const listener of this.listeners) listener(now);
  }

  /** Each component's state, and each breaker's as `breaker.<instance>`, for the debug listener. */
  describe(): Readonly<Record<string, boolean | string>> {
    const out: Record<string, boolean | string> = Object.fromEntries(this.components);
    for (const [instance, state] of this.breakers) out[`breaker.${instance}`] = state;
    return out;
  }

  onChange(listener: (isHealthy: boolean) => void): void {
    this.listeners.push(listener);
  }
}
