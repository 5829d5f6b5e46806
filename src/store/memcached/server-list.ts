// The current memcached server list: fixed (MEMCACHE_HOST_PORT) or from SRV, refreshed and swapped.
import type tls from 'node:tls';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { parseHostPort } from './address';
import { ServerPool } from './server-pool';
import { ServerSet } from './server-set';
import { resolveServers, type SrvResolver } from './srv';

export interface ServerListOptions {
  readonly hostPorts: readonly string[];
  readonly srv: string | undefined;
  /** 0: resolve the SRV name once, at start. */
  readonly srvRefreshMs: number;
  readonly connectionsPerServer: number;
  readonly timeoutMs: number;
  readonly tls: tls.ConnectionOptions | undefined;
  readonly resolver: SrvResolver;
  readonly logger: Logger;
  /** A server started or stopped answering. */
  readonly onStateChange: (pool: ServerPool) => void;
  /** A connection to a server failed (the server then counts as not answering). */
  readonly onConnectionError: (pool: ServerPool, err: Error) => void;
}

/**
 * Holds the ServerSet requests use. A refresh builds the next set beside the current one and
 * replaces it with one assignment, so a request sees one whole list from start to end;
 * connections to servers present in both lists are kept.
 */
export class ServerList {
  private set: ServerSet;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private retired: ServerPool[] = [];

  private constructor(
    private readonly options: ServerListOptions,
    addresses: readonly string[],
  ) {
    // The first servers count as not answering until they do: start-up waits for them.
    this.set = this.build(addresses, new Map(), false);
  }

  /** Resolves the SRV name (when set) and starts refreshing; rejects when it cannot resolve. */
  static async open(options: ServerListOptions): Promise<ServerList> {
    const addresses =
      options.srv === undefined
        ? [...options.hostPorts]
        : await resolveServers(options.srv, options.resolver);
    const list = new ServerList(options, addresses);
    if (options.srv !== undefined) {
      options.logger.info('memcached servers from SRV', {
        srv: options.srv,
        servers: addresses.join(','),
      });
      if (options.srvRefreshMs > 0) {
        list.timer = setInterval(() => {
          void list.refresh();
        }, options.srvRefreshMs);
        list.timer.unref();
      }
    }
    return list;
  }

  /** The servers requests go to now. */
  get current(): ServerSet {
    return this.set;
  }

  private build(
    addresses: readonly string[],
    reusable: Map<string, ServerPool>,
    isUpAtStart: boolean,
  ): ServerSet {
    const pools = addresses.map((address) => {
      const kept = reusable.get(address);
      if (kept !== undefined) return kept;
      const hostPort = parseHostPort(address);
      if (hostPort === undefined) throw new Error(`${address} is not host:port`);
      return new ServerPool({
        address,
        host: hostPort.host,
        port: hostPort.port,
        tls: this.options.tls,
        timeoutMs: this.options.timeoutMs,
        connections: this.options.connectionsPerServer,
        isUpAtStart,
        onStateChange: this.options.onStateChange,
        onConnectionError: this.options.onConnectionError,
      });
    });
    return new ServerSet(addresses, pools);
  }

  /**
   * Looks the SRV name up again and swaps in the new list when it differs. A failed lookup or
   * an empty answer keeps the current list (logged): a DNS hiccup must not empty the ring.
   */
  refresh(): Promise<void> {
    const srv = this.options.srv;
    if (srv === undefined) return Promise.resolve();
    this.refreshing ??= (async () => {
      try {
        const addresses = await resolveServers(srv, this.options.resolver);
        const old = this.set;
        if (addresses.join(',') === old.addresses.join(',')) return;
        const byAddress = new Map(old.pools.map((p) => [p.address, p]));
        this.set = this.build(addresses, byAddress, true);
        this.retire(old.pools.filter((p) => !addresses.includes(p.address)));
        this.options.logger.info('memcached servers changed', {
          srv,
          servers: addresses.join(','),
        });
      } catch (err: unknown) {
        this.options.logger.warn('failed to refresh the memcached servers; keeping the list', {
          srv,
          error: describeError(err),
        });
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * Pools left out of the new list: requests already written to them are answered or failed
   * within the timeout, and nothing new reaches them, so they close once it has passed.
   */
  private retire(pools: readonly ServerPool[]): void {
    if (pools.length === 0) return;
    this.retired.push(...pools);
    const timer = setTimeout(() => {
      for (const pool of pools) pool.close();
      this.retired = this.retired.filter((p) => !pools.includes(p));
    }, this.options.timeoutMs + 100);
    timer.unref();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const pool of [...this.set.pools, ...this.retired]) pool.close();
    this.retired = [];
  }
}
