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

/** Parsed flags: every flag's values, defaults included. */
export type Flags = ReadonlyMap<string, readonly string[]>;

/** The value of one flag argument, and how many arguments it took; or why it is wrong. */
function valueOf(
  spec: FlagSpec,
  inline: string | undefined,
  following: string | undefined,
): { value: string; taken: number } | FlagError {
  let value: string;
  let taken = 1;
  if (inline !== undefined) value = inline;
  else if (spec.isBoolean === true) value = 'true';
  else if (following === undefined) return new FlagError(`flag -${spec.name} needs a value`);
  else {
    value = following;
    taken = 2;
  }
  if (spec.isBoolean === true && parseGoBool(value) === undefined)
    return new FlagError(
      `invalid boolean value ${JSON.stringify(value)} for -${spec.name}: parse error`,
    );
  return { value, taken };
}

/**
 * Parses argv against the specs; every flag gets a list of values (defaults included).
 * Returns the FlagError of the first wrong argument instead.
 */
export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[]): Flags | FlagError {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length;) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-') || arg === '-' || arg === '--')
      return new FlagError(`unexpected argument ${JSON.stringify(arg)}`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (spec === undefined) return new FlagError(`unknown flag -${name}`);
    const parsed = valueOf(spec, eq < 0 ? undefined : body.slice(eq + 1), argv[i + 1]);
    if (parsed instanceof FlagError) return parsed;
    i += parsed.taken;
    const list = spec.isRepeatable === true ? (values.get(name) ?? []) : [];
    list.push(parsed.value);
    values.set(name, list);
  }
  for (const spec of specs) {
    if (!values.has(spec.name) && spec.defaultValue !== undefined)
      values.set(spec.name, [spec.defaultValue]);
  }
  return values;
}

/** A boolean flag's value; parseFlags has checked that it reads as Go's booleans do. */
export function flagIsTrue(flags: Flags, name: string): boolean {
  return parseGoBool(flags.get(name)?.[0] ?? 'false') === true;
}

/** Usage text: what the command does, then every flag. */
export function usage(command: string, specs: readonly FlagSpec[], about = ''): string {
  const lines = specs.map(
    (s) =>
      `  -${s.name}${s.isBoolean === true ? '' : ' value'}\n      ${s.help}${s.defaultValue === undefined ? '' : ` (default ${JSON.stringify(s.defaultValue)})`}`,
  );
  const intro = about === '' ? '' : `${about}\n\n`;
  return `usage: ${command} [flags]\n${intro}${lines.join('\n')}\n  -h, --help\n      print this and exit\n`;
}

/** A command-line tool: takes argv and the output streams, resolves with the exit code. */
export type CommandLineTool = (
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
) => Promise<number>;

/** The arguments that ask for usage, as Go's flag package reads them. */
const HELP = new Set(['-h', '-help', '--help']);

/** What a tool is called, what it does (for its usage) and the flags it takes. */
export interface ToolSpec {
  readonly command: string;
  readonly about: string;
  readonly flags: readonly FlagSpec[];
}

/**
 * A tool that parses its flags first: -h or --help prints the usage and exits 0; wrong flags
 * are explained with the usage and exit 2.
 */
export function commandLineTool(
  tool: ToolSpec,
  run: (flags: Flags, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => Promise<number>,
): CommandLineTool {
  const { command, about, flags: specs } = tool;
  return async (argv, out, err) => {
    if (argv.some((arg) => HELP.has(arg))) {
      out.write(usage(command, specs, about));
      return 0;
    }
    const flags = parseFlags(argv, specs);
    if (flags instanceof FlagError) {
      err.write(`${flags.message}\n${usage(command, specs)}`);
      return 2;
    }
    return run(flags, out, err);
  };
}
