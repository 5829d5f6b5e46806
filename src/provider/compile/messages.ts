// What the compile process and the service that started it say to each other.
import {
  ConfigError,
  type CheckOptions,
  type ConfigErrorCode,
  type NodeStrings,
  type SourcePosition,
  type TablesHeader,
} from '../../config';
import type { CompileJob } from './compiler';

/** What one compile is asked to do. */
export interface CompileInput {
  readonly job: CompileJob;
  readonly options: CheckOptions;
}

/** A ConfigError as plain data: errors lose their class when they cross processes. */
export interface PlainError {
  readonly code: ConfigErrorCode;
  readonly source: string;
  readonly reason: string;
  readonly position: SourcePosition | undefined;
}

/**
 * From the compile process: the refusal, or the header followed by one part of the nodes'
 * strings per `next` asked for; or that reading or compiling failed.
 */
export type FromCompiler =
  | {
      readonly type: 'refused';
      readonly errors: readonly PlainError[];
      readonly warnings: readonly string[];
    }
  | { readonly type: 'header'; readonly header: TablesHeader; readonly warnings: readonly string[] }
  | { readonly type: 'part'; readonly part: NodeStrings }
  | { readonly type: 'readFailed'; readonly message: string }
  | { readonly type: 'failed'; readonly message: string };

/** To the compile process: the job, then `next` for each part. */
export type ToCompiler =
  { readonly type: 'job'; readonly input: CompileInput } | { readonly type: 'next' };

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
