// A Redis Sentinel deployment on loopback: one master, its replicas and sentinels watching them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Certificates } from './certs';
import { eventually } from './eventually';
import { RedisNode, type RedisNodeOptions } from './redis-node';

export interface SentinelSetOptions {
  readonly replicas?: number;
  readonly sentinels?: number;
  readonly masterName?: string;
  /** TLS everywhere (clients, replication, sentinels): nothing listens in plain text. */
  readonly tls?: Certificates;
}

function sentinelConfig(masterName: string, masterPort: number, quorum: number): string {
  return [
    `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} ${quorum}`,
    `sentinel down-after-milliseconds ${masterName} 1000`,
    `sentinel failover-timeout ${masterName} 5000`,
    `sentinel parallel-syncs ${masterName} 1`,
    '',
  ].join('\n');
}

export class SentinelSet {
  private constructor(
    readonly masterName: string,
    readonly dataNodes: readonly RedisNode[],
    readonly sentinelNodes: readonly RedisNode[],
    private readonly dir: string,
  ) {}

  /**
   * Starts the data nodes, then the sentinels (which answer at once; they discover the replicas
   * and each other within seconds, which failover() waits for).
   */
  static async start(options: SentinelSetOptions = {}): Promise<SentinelSet> {
    const replicas = options.replicas ?? 1;
    const sentinels = options.sentinels ?? 3;
    const masterName = options.masterName ?? 'mymaster';
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-sentinel-'));
    const tls = options.tls;
    const at = (name: string): RedisNodeOptions => ({
      dir: mkdtempSync(path.join(dir, `${name}-`)),
      ...(tls === undefined ? {} : { tls: { certs: tls, mode: 'only' } }),
    });
    const started: RedisNode[] = [];
    const track = async (node: Promise<RedisNode>): Promise<RedisNode> => {
      const n = await node;
      started.push(n);
      return n;
    };
    try {
      const master = await track(RedisNode.start(at('master')));
      const args = ['--replicaof', '127.0.0.1', String(master.port)];
      const dataNodes = [master];
      for (let i = 0; i < replicas; i++) {
        dataNodes.push(await track(RedisNode.start({ ...at('replica'), args })));
      }
      const config = sentinelConfig(masterName, master.port, Math.min(2, sentinels));
      const sentinelNodes = await Promise.all(
        Array.from({ length: sentinels }, () =>
          track(RedisNode.start({ ...at('sentinel'), sentinelConfig: config })),
        ),
      );
      return new SentinelSet(masterName, dataNodes, sentinelNodes, dir);
    } catch (err: unknown) {
      await Promise.all(started.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** REDIS_URL for REDIS_TYPE=sentinel: the master name, then every sentinel. */
  get url(): string {
    return [this.masterName, ...this.sentinelNodes.map((s) => `127.0.0.1:${s.port}`)].join(',');
  }

  /** The data node the sentinels name as master now. */
  async master(): Promise<RedisNode> {
    const reply = (await this.sentinelNodes[0]?.command(
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      this.masterName,
    )) as [string, string] | null;
    const node = this.dataNodes.find((n) => String(n.port) === reply?.[1]);
    if (node === undefined) throw new Error(`no data node at ${JSON.stringify(reply)}`);
    return node;
  }

  /**
   * Until replicas are in sync and every sentinel knows the replicas and the other sentinels,
   * so that a failover can pick a replica and every sentinel hears of it.
   */
  async waitUntilSettled(): Promise<void> {
    const replicas = this.dataNodes.length - 1;
    await eventually(
      async () => {
        const master = await this.master();
        for (const node of this.dataNodes) {
          if (node === master) continue;
          const info = String(await node.command('INFO', 'replication'));
          if (!info.includes('master_link_status:up')) return false;
        }
        for (const sentinel of this.sentinelNodes) {
          const known = (await sentinel.command('SENTINEL', 'REPLICAS', this.masterName)) as [];
          const peers = (await sentinel.command('SENTINEL', 'SENTINELS', this.masterName)) as [];
          if (known.length < replicas || peers.length < this.sentinelNodes.length - 1) return false;
        }
        return true;
      },
      { what: 'the sentinels to know the replicas and each other', timeoutMs: 30_000 },
    );
  }

  /**
   * Asks the first sentinel to fail over now (no agreement needed) and waits until a replica
   * reports itself master, then until the sentinel names it. Resolves with the new master and
   * the moment it was first seen promoted.
   */
  async failover(): Promise<{ master: RedisNode; promotedAtMs: number }> {
    await this.waitUntilSettled();
    const old = await this.master();
    const sentinel = this.sentinelNodes[0];
    if (sentinel === undefined) throw new Error('no sentinel');
    // A sentinel refuses while it has no replica it considers fit yet; ask until it agrees.
    await eventually(
      async () => (await sentinel.command('SENTINEL', 'FAILOVER', this.masterName)) === 'OK',
      { what: 'SENTINEL FAILOVER to be accepted' },
    );
    const promoted = await eventually(
      async () => {
        for (const node of this.dataNodes) {
          if (node === old || !node.isRunning) continue;
          const role = (await node.command('ROLE')) as [string];
          if (role[0] === 'master') return { master: node, promotedAtMs: Date.now() };
        }
        throw new Error('no replica promoted yet');
      },
      { what: 'a replica to be promoted', intervalMs: 10, timeoutMs: 20_000 },
    );
    await eventually(async () => (await this.master()) === promoted.master, {
      what: 'the sentinel to name the new master',
    });
    return promoted;
  }

  /** Stops every process by its id and removes the directories. */
  async destroy(): Promise<void> {
    await Promise.all([...this.sentinelNodes, ...this.dataNodes].map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
