// Overall health from its components: backend connection, configuration, termination signal.

export type HealthComponent = 'backend' | 'config' | 'sigterm';

/** One component's state and the time it last changed. */
export interface ComponentHealth {
  readonly name: HealthComponent;
  readonly isHealthy: boolean;
  /** Milliseconds since the epoch: when it last changed, or when the service started. */
  readonly sinceMs: number;
}

/** Overall health and each component, for the debug listener's /health. */
export interface HealthReport {
  readonly isHealthy: boolean;
  readonly sinceMs: number;
  readonly components: readonly ComponentHealth[];
}

/**
 * Healthy only when every enabled component is healthy (SPEC.md "States and transitions").
 * The backend starts healthy, the configuration (when enabled) unhealthy, sigterm healthy.
 */
export class HealthState {
  private readonly components = new Map<HealthComponent, ComponentHealth>();
  private readonly listeners: ((isHealthy: boolean) => void)[] = [];
  private lastHealthy: boolean;
  private lastChangeMs: number;
  private readonly nowMs: () => number;

  constructor(options: { readonly requireConfig: boolean; readonly nowMs?: () => number }) {
    this.nowMs = options.nowMs ?? Date.now;
    const start = this.nowMs();
    const add = (name: HealthComponent, isHealthy: boolean): void => {
      this.components.set(name, { name, isHealthy, sinceMs: start });
    };
    add('backend', true);
    if (options.requireConfig) add('config', false);
    add('sigterm', true);
    this.lastHealthy = this.isHealthy();
    this.lastChangeMs = start;
  }

  isHealthy(): boolean {
    for (const component of this.components.values()) if (!component.isHealthy) return false;
    return true;
  }

  /** Sets a component; components not enabled at construction are ignored. */
  set(name: HealthComponent, isHealthy: boolean): void {
    const before = this.components.get(name);
    if (before === undefined || before.isHealthy === isHealthy) return;
    const nowMs = this.nowMs();
    this.components.set(name, { name, isHealthy, sinceMs: nowMs });
    const now = this.isHealthy();
    if (now === this.lastHealthy) return;
    this.lastHealthy = now;
    this.lastChangeMs = nowMs;
    for (const listener of this.listeners) listener(now);
  }

  /** Each component's state, for logs and the debug listener's /healthcheck/components. */
  describe(): Readonly<Record<string, boolean>> {
    return Object.fromEntries([...this.components].map(([name, c]) => [name, c.isHealthy]));
  }

  /** Overall health and each component with the time it last changed. */
  report(): HealthReport {
    return {
      isHealthy: this.lastHealthy,
      sinceMs: this.lastChangeMs,
      components: [...this.components.values()],
    };
  }

  onChange(listener: (isHealthy: boolean) => void): void {
    this.listeners.push(listener);
  }
}
