// Compiling what a provider loads: in a child process in the service, on the caller's thread in tools.
export {
  checkJob,
  InThreadCompiler,
  NODES_PER_PART,
  ReadFailure,
  type CheckedJob,
  type CompileJob,
  type ConfigCompiler,
} from './compiler';
export {
  COMPILE_SCRIPT,
  CompileTimeout,
  ProcessCompiler,
  serviceCompiler,
} from './process-compiler';
