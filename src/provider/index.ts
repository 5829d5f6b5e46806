// Configuration providers: the seam, and its file and xDS implementations.
export type { ConfigProvider, ConfigListener } from './provider';
export { FileConfigProvider, type FileProviderOptions } from './file/file-provider';
export {
  loadConfigDirectory,
  type DirectoryListing,
  type DirectoryLoad,
  type DirectoryLoadOptions,
} from './file/read-directory';
export { xdsNode } from './xds/channel';
export { XdsConfigProvider, type XdsProviderOptions } from './xds/xds-provider';
export { decodeResource, RATE_LIMIT_CONFIG_TYPE_URL } from './xds/resource';
export { Backoff, ReconnectDelays } from './xds/backoff';
export {
  COMPILE_SCRIPT,
  CompileTimeout,
  InThreadCompiler,
  ReadFailure,
  ProcessCompiler,
  serviceCompiler,
  type CompileJob,
  type ConfigCompiler,
} from './compile';
export { ProviderPodConfig } from './pod/pod-config';
export { SupervisedProvider, type SupervisedProviderOptions } from './pod/supervised-provider';
