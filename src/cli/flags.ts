// Go-style command-line flags (-name value, -name=value, --name), as the reference's tools take.
import { parseGoBool } from '../lib/go-syntax';

export interface FlagSpec {
  readonly name: string;
  readonly help: string;
  /** Repeatable flags collect every value. */
  readonly isRepeatable?: boolean;
  readonly isBoolean?: boolean;
  readonly defaultValue?: string;
}

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

/** Parses argv against the specs; every flag gets a list of values (defaults included). */
export function parseFlags(
  argv: readonly string[],
  specs: readonly FlagSpec[],
): Map<string, string[]> {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-') || arg === '-' || arg === '--')
      throw new FlagError(`unexpected argument ${JSON.stringify(arg)}`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (spec === undefined) throw new FlagError(`unknown flag -${name}`);
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.isBoolean === true) value = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new FlagError(`flag -${name} needs a value`);
      value = next;
      i += 1;
    }
    if (spec.isBoolean === true && parseGoBool(value) === undefined)
      throw new FlagError(
        `invalid boolean value ${JSON.stringify(value)} for -${name}: parse error`,
      );
    const list = values.get(name) ?? [];
    if (list.length > 0 && spec.isRepeatable !== true) list.length = 0;
    list.push(value);
    values.set(name, list);
  }
  for (const spec of specs) {
    if (!values.has(spec.name) && spec.defaultValue !== undefined)
      values.set(spec.name, [spec.defaultValue]);
  }
  return values;
}

/** Parsed flags: every flag's values, defaults included. */
export type Flags = ReadonlyMap<string, readonly string[]>;

/** A boolean flag's value; parseFlags has checked that it reads as Go's booleans do. */
export function flagIsTrue(flags: Flags, name: string): boolean {
  return parseGoBool(flags.get(name)?.[0] ?? 'false') === true;
}

/** Usage text listing every flag. */
export function usage(command: string, specs: readonly FlagSpec[]): string {
  const lines = specs.map(
    (s) =>
      `  -${s.name}${s.isBoolean === true ? '' : ' value'}\n      ${s.help}${s.defaultValue === undefined ? '' : ` (default ${JSON.stringify(s.defaultValue)})`}`,
  );
  return `usage: ${command} [flags]\n${lines.join('\n')}\n`;
}

/**
 * Parses argv, or writes the problem and the usage to `err` and returns undefined (the
 * caller exits 2).
 */
function parseOrExplain(
  command: string,
  argv: readonly string[],
  specs: readonly FlagSpec[],
  err: NodeJS.WritableStream,
): Map<string, string[]> | undefined {
  try {
    return parseFlags(argv, specs);
  } catch (e: unknown) {
    if (!(e instanceof FlagError)) throw e;
    err.write(`${e.message}\n${usage(command, specs)}`);
    return undefined;
  }
}

/** A command-line tool: takes argv and the output streams, resolves with the exit code. */
export type CommandLineTool = (
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
) => Promise<number>;

/** A tool that parses its flags first: wrong ones are explained with the usage and exit 2. */
export function commandLineTool(
  command: string,
  specs: readonly FlagSpec[],
  run: (flags: Flags, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => Promise<number>,
): CommandLineTool {
  return async (argv, out, err) => {
    const flags = parseOrExplain(command, argv, specs, err);
    return flags === undefined ? 2 : run(flags, out, err);
  };
}
