// Overall health from its components: backend connection, configuration, termination signal.

export type HealthComponent = 'backend' | 'config' | 'sigterm';

/**
 * Healthy only when every enabled component is healthy (SPEC.md "States and transitions").
 * The backend starts healthy, the configuration (when enabled) unhealthy, sigterm healthy.
 */
export class HealthState {
  private readonly components = new Map<HealthComponent, boolean>();
  private readonly listeners: ((isHealthy: boolean) => void)[] = [];
  private lastHealthy: boolean;

  constructor(options: { readonly requireConfig: boolean }) {
    this.components.set('backend', true);
    if (options.requireConfig) this.components.set('config', false);
    this.components.set('sigterm', true);
    this.lastHealthy = this.isHealthy();
  }

  isHealthy(): boolean {
    for (const healthy of this.components.values()) if (!healthy) return false;
    return true;
  }

  /** Sets a component; components not enabled at construction are ignored. */
  set(component: HealthComponent, isHealthy: boolean): void {
    if (!this.components.has(component)) return;
    this.components.set(component, isHealthy);
    const now = this.isHealthy();
    if (now === this.lastHealthy) return;
    this.lastHealthy = now;
    for (const listener of this.listeners) listener(now);
  }

  /** Each component's state, for logs and the debug listener. */
  describe(): Readonly<Record<string, boolean>> {
    return Object.fromEntries(this.components);
  }

  onChange(listener: (isHealthy: boolean) => void): void {
    this.listeners.push(listener);
  }
}
