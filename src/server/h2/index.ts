// HTTP/2 for the gRPC listener, spoken over the socket directly (see session.ts).
export { acceptH2, type H2Handlers } from './accept';
export { ErrorCode } from './frames';
export type { H2Headers } from './hpack';
export type { OutgoingHeaders } from './hpack-encoder';
export { whenDrained } from './drained';
export { H2Session, type H2SessionOptions } from './session';
export { H2Stream, type H2Connection, type RespondOptions } from './stream';
export { BufferBudget, ConnectionBudget, type BudgetRefusal } from './buffer-budget';
export { HeldBytes } from './held-bytes';
export { checkSharedReads, movedTo, type SharedReadsCheck } from './shared-reads';
