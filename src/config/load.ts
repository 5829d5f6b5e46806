// One load of a configuration source: the documents it parsed, compiled, every problem collected.
import { compile } from './compile';
import type { CompileOptions } from './options';
import type { ConfigDocument } from './document';
import { ConfigError } from './errors';
import type { ConfigSnapshot } from './types';

/** What one file or one xDS resource gives: its document, or the error that refuses it. */
export type ParsedSource = ConfigDocument | ConfigError;

/** The outcome of one load; the warnings of the documents that parsed come with it either way. */
export type LoadOutcome =
  | {
      readonly ok: true;
      readonly snapshot: ConfigSnapshot;
      readonly warnings: readonly string[];
    }
  | {
      readonly ok: false;
      readonly errors: readonly ConfigError[];
      readonly warnings: readonly string[];
    };

/**
 * Compiles the documents that parsed into one snapshot. The load is refused whole when any
 * source was refused or the compilation finds a problem; the errors then list every problem
 * of every source (the sources' own first, in order, then the compiler's).
 */
export function compileSources(
  sources: readonly ParsedSource[],
  options: CompileOptions,
): LoadOutcome {
  const errors: ConfigError[] = [];
  const documents: ConfigDocument[] = [];
  for (const source of sources) {
    if (source instanceof ConfigError) errors.push(source);
    else documents.push(source);
  }
  const warnings = documents.flatMap((doc) => doc.warnings);
  const result = compile(documents, options);
  if (!result.ok) errors.push(...result.errors);
  if (errors.length > 0 || !result.ok) return { ok: false, errors, warnings };
  return { ok: true, snapshot: result.snapshot, warnings };
}
