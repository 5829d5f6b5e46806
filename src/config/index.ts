// Configuration: the file format, compilation into immutable snapshots, and matching.
export { parseConfigFile } from './yaml-loader';
export { check, compile, snapshotOfTables, type CheckResult, type CompileResult } from './compile';
export type { CheckOptions, CompileOptions } from './options';
export { SnapshotBuilder } from './snapshot-builder';
export { snapshotTables } from './snapshot';
export { columnBuffers, stringParts } from './tables';
export type { CompiledTables, NodeStrings, RuleExtras, TablesHeader } from './tables';
export { compileSources, type LoadOutcome, type ParsedSource } from './load';
export {
  ConfigError,
  CONFIG_ERROR_CODES,
  refusalMessage,
  type ConfigErrorCode,
  type SourcePosition,
} from './errors';
export { originFields } from './origin';
export { UNITS, UNIT_SECONDS, parseUnit, type Unit } from './units';
export { ALGORITHMS } from './types';
export type { BackendCapabilities } from './limits';
export type * from './types';
export type * from './document';
export { MAX_DESCRIPTOR_DEPTH } from './document';
