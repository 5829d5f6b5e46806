// What the compile worker and the thread that started it say to each other.
import {
  ConfigError,
  type CheckOptions,
  type ConfigErrorCode,
  type NodeStrings,
  type SourcePosition,
  type TablesHeader,
} from '../../config';
import type { CompileJob } from './compiler';

/** What the worker is started with. */
export interface WorkerInput {
  readonly job: CompileJob;
  readonly options: CheckOptions;
}

/** A ConfigError as plain data: errors lose their class when they cross threads. */
export interface PlainError {
  readonly code: ConfigErrorCode;
  readonly source: string;
  readonly reason: string;
  readonly position: SourcePosition | undefined;
}

/**
 * From the worker: the refusal, or the header followed by one part of the nodes' strings per
 * `next` asked for; or that reading or compiling failed.
 */
export type FromWorker =
  | {
      readonly type: 'refused';
      readonly errors: readonly PlainError[];
      readonly warnings: readonly string[];
    }
  | { readonly type: 'header'; readonly header: TablesHeader; readonly warnings: readonly string[] }
  | { readonly type: 'part'; readonly part: NodeStrings }
  | { readonly type: 'readFailed'; readonly message: string }
  | { readonly type: 'failed'; readonly message: string };

/** To the worker: send the next part. */
export interface ToWorker {
  readonly type: 'next';
}

export function plainError(error: ConfigError): PlainError {
  return {
    code: error.code,
    source: error.source,
    reason: error.reason,
    position: error.position,
  };
}

export function configError(plain: PlainError): ConfigError {
  return new ConfigError(plain.code, plain.source, plain.reason, plain.position);
}
