// The ConfigCompiler seam: what turns a provider's files or resources into a snapshot, and how.
import { readFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  check,
  ConfigError,
  parseConfigFile,
  SnapshotBuilder,
  stringParts,
  type CheckOptions,
  type CompiledTables,
  type CompileOptions,
  type LoadOutcome,
  type ParsedSource,
} from '../../config';
import { describeError } from '../../lib/errors';
import { decodeResources } from '../xds/quota-rules-resource';
import type { WireAny } from '../xds/resource';

/** What a provider hands over: the files of a directory, or the resources of an xDS response. */
export type CompileJob =
  | { readonly kind: 'files'; readonly files: readonly string[] }
  | { readonly kind: 'resources'; readonly resources: readonly WireAny[] };

/** A file of a job could not be read; the provider reports the directory as unreadable. */
export class ReadFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReadFailure';
  }
}

/**
 * Turns a job into a snapshot, or the errors that refuse it. Reading, parsing and checking
 * may run anywhere; the snapshot is built on the calling thread (it holds statistics handles),
 * in parts, so that answering goes on meanwhile. Rejects with ReadFailure when a file cannot be
 * read, and with any other error when compiling itself failed.
 */
export interface ConfigCompiler {
  compile(job: CompileJob, options: CompileOptions): Promise<LoadOutcome>;
}

/** Nodes built per turn of the event loop: a few milliseconds of work. */
export const NODES_PER_PART = 8192;

/** The outcome of reading, parsing and checking a job. */
export type CheckedJob =
  | { readonly ok: true; readonly tables: CompiledTables; readonly warnings: readonly string[] }
  | {
      readonly ok: false;
      readonly errors: readonly ConfigError[];
      readonly warnings: readonly string[];
    };

/** Reads (or decodes) the job's sources and parses them. */
async function sourcesOf(job: CompileJob): Promise<ParsedSource[]> {
  if (job.kind === 'resources') return decodeResources(job.resources);
  return Promise.all(
    job.files.map(async (file) => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err: unknown) {
        throw new ReadFailure(describeError(err));
      }
      return parseConfigFile(file, text);
    }),
  );
}

/**
 * Reads, parses and checks a job: everything but building the snapshot. The sources' own
 * refusals come first, in order, then the checker's, as compileSources lists them.
 */
export async function checkJob(job: CompileJob, options: CheckOptions): Promise<CheckedJob> {
  const sources = await sourcesOf(job);
  const errors: ConfigError[] = [];
  const documents = [];
  for (const source of sources) {
    if (source instanceof ConfigError) errors.push(source);
    else documents.push(source);
  }
  const warnings = documents.flatMap((doc) => doc.warnings);
  const checked = check(documents, options);
  if (!checked.ok) errors.push(...checked.errors);
  if (errors.length > 0 || !checked.ok) return { ok: false, errors, warnings };
  return { ok: true, tables: checked.tables, warnings };
}

/**
 * Compiles on the calling thread: checking in one go, building in parts with a turn of the
 * event loop between them. For tools and tests; the service checks in a child process.
 */
export class InThreadCompiler implements ConfigCompiler {
  async compile(job: CompileJob, options: CompileOptions): Promise<LoadOutcome> {
    const checked = await checkJob(job, options);
    if (!checked.ok) return checked;
    const builder = new SnapshotBuilder(checked.tables.header, options);
    for (const part of stringParts(checked.tables.strings, NODES_PER_PART)) {
      builder.add(part);
      await nextTurn();
    }
    return { ok: true, snapshot: builder.finish(), warnings: checked.warnings };
  }
}
