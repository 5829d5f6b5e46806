// Compiling what a provider loads: on a worker thread in the service, on the caller's in tools.
export {
  checkJob,
  InThreadCompiler,
  NODES_PER_PART,
  ReadFailure,
  type CheckedJob,
  type CompileJob,
  type ConfigCompiler,
} from './compiler';
export { COMPILE_WORKER_SCRIPT, serviceCompiler, WorkerCompiler } from './worker-compiler';
