// Types for cluster-key-slot, the key-to-slot function ioredis itself routes cluster commands with.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0-16383) of a key, honouring {hash tags}. */
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
