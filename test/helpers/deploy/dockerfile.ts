// A Dockerfile read into stages and instructions, for checks that need no container engine.

export interface Instruction {
  /** Upper-cased keyword: FROM, RUN, COPY ... */
  readonly keyword: string;
  /** The rest of the line, continuation lines joined. */
  readonly args: string;
  /** `--from=...` and other flags of COPY/ADD. */
  readonly flags: Readonly<Record<string, string>>;
}

export interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

/** Splits the flags (`--from=build`) off the front of an instruction's arguments. */
function splitFlags(args: string): { flags: Record<string, string>; rest: string } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    if (m === null) return { flags, rest };
    flags[m[1] ?? ''] = m[2] ?? '';
    rest = rest.slice(m[0].length);
  }
}

/** Parses a Dockerfile into its stages (instructions before the first FROM are ARGs, dropped). */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    const keyword = (m?.[1] ?? '').toUpperCase();
    const { flags, rest } = splitFlags(m?.[2] ?? '');
    if (keyword === 'FROM') {
      const [image = '', as, name] = rest.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
      continue;
    }
    stages[stages.length - 1]?.instructions.push({ keyword, args: rest, flags });
  }
  return stages;
}

/** The words of an exec-form (JSON array) instruction; throws for the shell form. */
export function execForm(args: string): string[] {
  const value: unknown = JSON.parse(args);
  if (!Array.isArray(value) || !value.every((w) => typeof w === 'string'))
    throw new Error(`not an exec-form array: ${args}`);
  return value;
}

/** The sources of a COPY instruction (every word but the last, the destination). */
export function copySources(instruction: Instruction): string[] {
  const words = instruction.args.split(/\s+/);
  return words.slice(0, -1);
}
