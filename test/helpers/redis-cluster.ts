// A Redis Cluster on loopback (masters with one replica each), made with redis-cli --cluster create.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import type { Certificates } from './certs';
import { eventually } from './eventually';
import { missingProgram } from './programs';
import { RedisNode } from './redis-node';

export interface RedisClusterOptions {
  readonly masters?: number;
  /**
   * Also listen with TLS on a second port of each node (the cluster bus and replication use
   * TLS too); a node tells each client the ports of the kind it connected with.
   */
  readonly tls?: Certificates;
}

/** A node of the cluster with the ports clients reach it on. */
export interface ClusterMember {
  readonly node: RedisNode;
  readonly port: number;
  readonly tlsPort: number | undefined;
}

/** A CLUSTER SLOTS entry: first slot, last slot, then [ip, port, id] of the master and replicas. */
type SlotRange = [number, number, ...[string, number, ...unknown[]][]];

export class RedisCluster {
  private constructor(
    readonly members: readonly ClusterMember[],
    private readonly dir: string,
  ) {}

  /** Starts 2 × masters nodes, joins them into a cluster and waits until every slot is served. */
  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const count = (options.masters ?? 3) * 2;
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-cluster-'));
    const certs = options.tls;
    const members = await Promise.all(
      Array.from({ length: count }, async (_, i): Promise<ClusterMember> => {
        const node = await RedisNode.start({
          dir: mkdtempSync(path.join(dir, `node${i}-`)),
          cluster: true,
          ...(certs === undefined ? {} : { tls: { certs, mode: 'also' } }),
        });
        return { node, port: node.port, tlsPort: node.tlsPort };
      }),
    );
    const cluster = new RedisCluster(members, dir);
    try {
      await promisify(execFile)(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...members.map((m) => `127.0.0.1:${m.port}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        { timeout: 30_000 },
      );
      await cluster.waitUntilHealthy();
    } catch (err: unknown) {
      await cluster.destroy();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw missingProgram('redis-cli', 'not found on PATH');
      throw err;
    }
    return cluster;
  }

  /** REDIS_URL for REDIS_TYPE=cluster: every node, plain or TLS ports. */
  seeds(kind: 'plain' | 'tls' = 'plain'): string {
    return this.members
      .map((m) => `127.0.0.1:${kind === 'tls' ? String(m.tlsPort) : String(m.port)}`)
      .join(',');
  }

  private member(port: number): ClusterMember {
    const found = this.members.find((m) => m.port === port || m.tlsPort === port);
    if (found === undefined) throw new Error(`no cluster node on port ${port}`);
    return found;
  }

  /**
   * Until every live node sees the cluster ok and names a live replica, in sync, beside the
   * master of every slot range.
   */
  async waitUntilHealthy(): Promise<void> {
    await eventually(
      async () => {
        for (const m of this.members) {
          if (!m.node.isRunning) continue;
          const info = String(await m.node.command('CLUSTER', 'INFO'));
          if (!info.includes('cluster_state:ok')) return false;
          for (const [, , master, replica] of await this.slotRanges(m)) {
            if (master === undefined || replica === undefined) return false;
            if (!this.member(replica[1]).node.isRunning) return false;
          }
          const replication = String(await m.node.command('INFO', 'replication'));
          if (replication.includes('role:slave') && !replication.includes('master_link_status:up'))
            return false;
        }
        return true;
      },
      { what: 'the cluster to be healthy', timeoutMs: 30_000 },
    );
  }

  private async slotRanges(m: ClusterMember): Promise<SlotRange[]> {
    return (await m.node.command('CLUSTER', 'SLOTS')) as SlotRange[];
  }

  /** The slot ranges `member` serves, as a live node sees the cluster now. */
  async slotsOf(member: ClusterMember): Promise<[number, number][]> {
    const live = this.members.find((m) => m.node.isRunning);
    if (live === undefined) throw new Error('no live node');
    return (await this.slotRanges(live))
      .filter(([, , master]) => master?.[1] === member.port)
      .map(([from, to]) => [from, to]);
  }

  /** The master serving `key` and its replica, as a live node sees the cluster now. */
  async ownerOf(key: string): Promise<{ master: ClusterMember; replica: ClusterMember }> {
    const live = this.members.find((m) => m.node.isRunning);
    if (live === undefined) throw new Error('no live node');
    const slot = Number(await live.node.command('CLUSTER', 'KEYSLOT', key));
    for (const [from, to, master, replica] of await this.slotRanges(live)) {
      if (slot < from || slot > to) continue;
      if (master === undefined || replica === undefined) break;
      return { master: this.member(master[1]), replica: this.member(replica[1]) };
    }
    throw new Error(`no master with a replica serves slot ${slot}`);
  }

  /**
   * Promotes `replica` with CLUSTER FAILOVER (coordinated with its master, or FORCE when the
   * master is gone) and waits until it reports itself master.
   */
  async failover(replica: ClusterMember, force = false): Promise<{ promotedAtMs: number }> {
    await replica.node.command('CLUSTER', 'FAILOVER', ...(force ? ['FORCE'] : []));
    return this.waitForMaster(replica);
  }

  /** Waits until `member` reports itself master; resolves with the moment it was seen so. */
  waitForMaster(member: ClusterMember): Promise<{ promotedAtMs: number }> {
    return eventually(
      async () => {
        const role = (await member.node.command('ROLE')) as [string];
        if (role[0] !== 'master') throw new Error(`still ${role[0]}`);
        return { promotedAtMs: Date.now() };
      },
      { what: `node ${member.port} to be promoted`, intervalMs: 10, timeoutMs: 20_000 },
    );
  }

  /**
   * Moves `slot` and its keys from master `from` to master `to`, as resharding does
   * (IMPORTING, MIGRATING, MIGRATE, then SETSLOT NODE on every master), without telling
   * clients: their next command for it meets MOVED.
   */
  async moveSlot(slot: number, from: ClusterMember, to: ClusterMember): Promise<void> {
    const idOf = async (m: ClusterMember): Promise<string> =>
      String(await m.node.command('CLUSTER', 'MYID'));
    const [fromId, toId] = await Promise.all([idOf(from), idOf(to)]);
    await to.node.command('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
    await from.node.command('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
    const keys = (await from.node.command('CLUSTER', 'GETKEYSINSLOT', slot, 1000)) as string[];
    // With TLS the nodes speak it to each other too, MIGRATE included: it goes to the TLS port.
    const port = to.tlsPort ?? to.port;
    if (keys.length > 0)
      await from.node.command('MIGRATE', '127.0.0.1', port, '', 0, 5000, 'KEYS', ...keys);
    const masters = [];
    for (const m of this.members) {
      if (!m.node.isRunning) continue;
      const role = (await m.node.command('ROLE')) as [string];
      if (role[0] === 'master') masters.push(m);
    }
    for (const m of masters) await m.node.command('CLUSTER', 'SETSLOT', slot, 'NODE', toId);
  }

  /** A cluster client for checking keys directly. */
  client(): Cluster {
    return new Cluster(
      this.members.map((m) => ({ host: '127.0.0.1', port: m.port })),
      { redisOptions: { disconnectTimeout: 50, maxRetriesPerRequest: 1 } },
    );
  }

  /** Stops every node by its process id and removes the directories. */
  async destroy(): Promise<void> {
    await Promise.all(this.members.map((m) => m.node.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
