// Configuration: the file format, compilation into immutable snapshots, and matching.
export { parseConfigFile } from './yaml-loader';
export { compile, type CompileOptions, type CompileResult } from './compile';
export { compileSources, type LoadOutcome, type ParsedSource } from './load';
export {
  ConfigError,
  CONFIG_ERROR_CODES,
  refusalMessage,
  type ConfigErrorCode,
  type SourcePosition,
} from './errors';
export { UNITS, UNIT_SECONDS, parseUnit, type Unit } from './units';
export { ALGORITHMS } from './types';
export type { BackendCapabilities } from './limits';
export type * from './types';
export type * from './document';
