// The commands of a README section, read as a shell would split them, and Helm's --set syntax.
import type { Values } from './chart';

/** The body of a `## heading` section, up to the next `## `. */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + heading.length + 4);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The commands in a section's ```sh blocks: continuation lines joined, comments dropped. */
export function commands(text: string): string[][] {
  const out: string[][] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = (block[1] ?? '').replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const words = shellWords(line);
      if (words.length > 0) out.push(words);
    }
  }
  return out;
}

/** Splits a line into words as sh does for plain and quoted words; `#` starts a comment. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let hasWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'" || ch === '"') {
      const close = line.indexOf(ch, i + 1);
      if (close < 0) throw new Error(`unclosed quote in: ${line}`);
      word += line.slice(i + 1, close);
      hasWord = true;
      i = close;
    } else if (ch === ' ' || ch === '\t') {
      if (hasWord) words.push(word);
      word = '';
      hasWord = false;
    } else if (ch === '#' && !hasWord) {
      break;
    } else {
      word += ch;
      hasWord = true;
    }
  }
  if (hasWord) words.push(word);
  return words;
}

/** A --set value typed as Helm types it: booleans, whole numbers, `{a,b}` lists, else text. */
function setValue(text: string): unknown {
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+$/.test(text)) return Number(text);
  if (text.startsWith('{') && text.endsWith('}')) return text.slice(1, -1).split(',');
  return text;
}

/** Applies one `--set a.b=c,d=e` argument to the values (commas inside {} stay in the list). */
export function applySet(values: Values, arg: string): Values {
  const out = structuredClone(values);
  for (const assignment of arg.match(/(?:[^,{]|\{[^}]*\})+/g) ?? []) {
    const eq = assignment.indexOf('=');
    const keys = assignment.slice(0, eq).split('.');
    let node = out;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
      node = node[key] as Values;
    }
    node[keys[keys.length - 1]!] = setValue(assignment.slice(eq + 1));
  }
  return out;
}
