// Overall health from its components: backend connection, configuration, termination signal,
// and (when so configured) the backend instances' circuit breakers.

export type HealthComponent = 'backend' | 'config' | 'sigterm';

/** One component's state and the time it last changed. */
export interface ComponentHealth {
  readonly name: HealthComponent;
  readonly isHealthy: boolean;
  /** Milliseconds since the epoch: when it last changed, or when the service started. */
  readonly sinceMs: number;
  /**
   * Whether it decides the overall health. Every component is followed either way, so the
   * status page can say the configuration is missing or the backend unreachable even when
   * the settings keep those out of health (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED,
   * REDIS_HEALTH_CHECK_ACTIVE_CONNECTION).
   */
  readonly affectsHealth: boolean;
}
/** One backend instance's circuit breaker (BACKEND_FAILURE_*) and when it last changed. */
export interface BreakerHealth {
  readonly instance: string;
  readonly state: string;
  readonly sinceMs: number;
}

/**
 * Whether the backend's connection decides health: always (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION),
 * never, or only until it first connects (memcached: not ready before it answers at start-up;
 * an outage afterwards shows in the components only, as in the reference).
 */
export type BackendHealthRule = boolean | 'until-first-connection';

/** What health needs of the counter store: whether it is connected, and each change. */
export interface BackendConnection {
  isConnected(): boolean;
  onConnectionChange(listener: (isConnected: boolean) => void): void;
}

/** Overall health and each component, for the debug listener's /health. */
export interface HealthReport {
  readonly isHealthy: boolean;
  readonly sinceMs: number;
  readonly components: readonly ComponentHealth[];
  readonly breakers: readonly BreakerHealth[];
}

/**
 * Healthy only when every component that affects health is healthy: the configuration when required, the backend when so configured, and the
 * termination signal always. The backend starts healthy (unhealthy when it counts only until
 * its first connection), the configuration unhealthy (none is loaded yet), sigterm healthy.
 */
export class HealthState {
  private readonly components = new Map<HealthComponent, ComponentHealth>();
  /** Each backend instance's circuit breaker state (BACKEND_FAILURE_*), by instance. */
  private readonly breakers = new Map<string, BreakerHealth>();
  private readonly isBreakerHealth: boolean;
  /** The backend decides health only until its first connection, which ends that. */
  private readonly isBackendGateOnly: boolean;
  private readonly listeners: ((isHealthy: boolean) => void)[] = [];
  private lastHealthy: boolean;
  private lastChangeMs: number;
  private readonly nowMs: () => number;

  constructor(options: {
    /** A configuration with a domain is needed (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED). */
    readonly requireConfig: boolean;
    readonly nowMs?: () => number;
    /**
     * The backend connection counts (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION), or only until it
     * first connects; by default it does, for callers that only report it when it should.
     * Until its first connection the backend starts unhealthy.
     */
    readonly backendAffectsHealth?: BackendHealthRule;
    /** A breaker that is not closed makes the service unhealthy (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION). */
    readonly breakerAffectsHealth?: boolean;
  }) {
    this.nowMs = options.nowMs ?? Date.now;
    this.isBreakerHealth = options.breakerAffectsHealth ?? false;
    const start = this.nowMs();
    const add = (name: HealthComponent, isHealthy: boolean, affectsHealth: boolean): void => {
      this.components.set(name, { name, isHealthy, sinceMs: start, affectsHealth });
    };
    const backendRule = options.backendAffectsHealth ?? true;
    this.isBackendGateOnly = backendRule === 'until-first-connection';
    add('backend', !this.isBackendGateOnly, backendRule !== false);
    add('config', false, options.requireConfig);
    add('sigterm', true, true);
    this.lastHealthy = this.isHealthy();
    this.lastChangeMs = start;
  }

  isHealthy(): boolean {
    for (const c of this.components.values()) if (c.affectsHealth && !c.isHealthy) return false;
    if (this.isBreakerHealth)
      for (const breaker of this.breakers.values()) if (breaker.state !== 'closed') return false;
    return true;
  }

  /** Sets a component; it changes the overall health only if it affects health. */
  set(name: HealthComponent, isHealthy: boolean): void {
    const before = this.components.get(name);
    if (before === undefined || before.isHealthy === isHealthy) return;
    const nowMs = this.nowMs();
    const isGateOpened = name === 'backend' && isHealthy && this.isBackendGateOnly;
    const affectsHealth = isGateOpened ? false : before.affectsHealth;
    this.components.set(name, { ...before, isHealthy, sinceMs: nowMs, affectsHealth });
    this.changed(nowMs);
  }

  /**
   * Follows the backend's connection whatever the settings, so the status page can say it is
   * unreachable even when REDIS_HEALTH_CHECK_ACTIVE_CONNECTION keeps it out of health.
   */
  followBackend(backend: BackendConnection): void {
    this.set('backend', backend.isConnected());
    backend.onConnectionChange((isConnected) => {
      this.set('backend', isConnected);
    });
  }

  /** Records a backend instance's breaker state; it counts for health only when configured so. */
  setBreaker(instance: string, state: string): void {
    if (this.breakers.get(instance)?.state === state) return;
    const nowMs = this.nowMs();
    this.breakers.set(instance, { instance, state, sinceMs: nowMs });
    this.changed(nowMs);
  }

  private changed(nowMs: number): void {
    const now = this.isHealthy();
    if (now === this.lastHealthy) return;
    this.lastHealthy = now;
    this.lastChangeMs = nowMs;
    for (const listener of this.listeners) listener(now);
  }

  /**
   * The state of each component that affects health, of the backend always (an outage shows
   * there even when REDIS_HEALTH_CHECK_ACTIVE_CONNECTION keeps it out of health), and each
   * breaker's as `breaker.<instance>`, for logs and the debug listener's /healthcheck/components.
   */
  describe(): Readonly<Record<string, boolean | string>> {
    const out: Record<string, boolean | string> = Object.fromEntries(
      [...this.components.values()]
        .filter((c) => c.affectsHealth || c.name === 'backend')
        .map((c) => [c.name, c.isHealthy]),
    );
    for (const [instance, breaker] of this.breakers) out[`breaker.${instance}`] = breaker.state;
    return out;
  }

  /** Overall health, each component and each breaker with the time it last changed. */
  report(): HealthReport {
    return {
      isHealthy: this.lastHealthy,
      sinceMs: this.lastChangeMs,
      components: [...this.components.values()],
      breakers: [...this.breakers.values()],
    };
  }

  onChange(listener: (isHealthy: boolean) => void): void {
    this.listeners.push(listener);
  }
}
