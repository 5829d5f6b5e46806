// The README's command blocks as steps a test can run: each command with the answer printed
// under it as `# ` lines, and a matcher for those answers.

/** One command of a ```sh block and the output the README shows under it. */
export interface Step {
  /** As written, continuation lines included; sh reads it. */
  readonly command: string;
  /** The `# ` lines right under the command, without the `# `; empty when none is shown. */
  readonly expected: readonly string[];
}

/** The steps of every ```sh block of `text`, block by block. */
export function blocks(text: string): Step[][] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => stepsOf(m[1] ?? ''));
}

function stepsOf(block: string): Step[] {
  const steps: { command: string; expected: string[] }[] = [];
  let current: { command: string; expected: string[] } | undefined;
  let continued = '';
  for (const line of block.split('\n')) {
    if (continued !== '' || (!line.startsWith('#') && line.trim() !== '')) {
      continued += continued === '' ? line : `\n${line}`;
      if (line.endsWith('\\')) continue;
      current = { command: continued, expected: [] };
      steps.push(current);
      continued = '';
    } else if (line.startsWith('#')) {
      current?.expected.push(line.replace(/^# ?/, ''));
    } else {
      current = undefined;
    }
  }
  return steps;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether `output` is what the README shows: line for line, where a line `...` stands for any
 * number of lines, `...` inside a line for any text, and a number of seconds (`43s`) for any.
 */
export function matchesShown(expected: readonly string[], output: string): boolean {
  const lines = expected.map((line) =>
    line === '...'
      ? '(?:[^\\n]*\\n)*?'
      : `${escape(line)
          .replace(/\\\.\\\.\\\./g, '[^\\n]*')
          .replace(/\d+s\b/g, '\\d+s')}\\n`,
  );
  const text = output.endsWith('\n') ? output : `${output}\n`;
  return new RegExp(`^${lines.join('')}$`).test(text);
}

/** The command with each port the README names replaced by the one actually bound. */
export function withPorts(command: string, ports: ReadonlyMap<number, number>): string {
  return command.replace(/\b(\d{4,5})\b/g, (text) => String(ports.get(Number(text)) ?? text));
}
