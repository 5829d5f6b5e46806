// How replicas of the service learn each other's Envoys' demand, so one budget holds across them.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RemoteClaim } from './bucket';

/**
 * The demand of every replica's Envoys per bucket. A replica publishes its own claims and reads
 * the others' in one exchange; what a replica stops publishing (it died, or its Envoys left)
 * disappears from the others' view within the share's TTL.
 */
export interface QuotaDemandShare {
  /** Unique among the replicas: the prefix of this replica's claim ids. */
  readonly replicaId: string;
  /**
   * Publishes this replica's claims per bucket key (an empty list withdraws them) and resolves
   * with the other replicas' claims for the same keys. Rejects when the shared store cannot be
   * reached; the caller keeps what it last read.
   */
  exchange(
    local: ReadonlyMap<string, readonly RemoteClaim[]>,
  ): Promise<ReadonlyMap<string, readonly RemoteClaim[]>>;
  /** Stops publishing; what was published expires on its own. */
  close(): Promise<void>;
}

/** A replica id: the host, the process and a random part (a restarted process is a new replica). */
export function newReplicaId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** One replica alone: there is nobody to share with (the memory backend). */
export class MemoryDemandShare implements QuotaDemandShare {
  constructor(readonly replicaId: string = newReplicaId()) {}

  exchange(): Promise<ReadonlyMap<string, readonly RemoteClaim[]>> {
    return Promise.resolve(new Map());
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
