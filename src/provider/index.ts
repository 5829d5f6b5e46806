// Configuration providers: the seam, and its file implementation.
export type { ConfigProvider, ConfigListener } from './provider';
export {
  FileConfigProvider,
  configDirectory,
  type FileProviderOptions,
} from './file/file-provider';
