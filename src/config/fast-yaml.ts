// A quick reader of the plain YAML that generated configuration files are written in.
//
// It reads block maps and lists, one-line flow maps of scalars, plain and simply quoted scalars,
// comments and blank lines, and nothing else. Anything outside that (anchors, tags, block
// scalars, escapes, multi-line scalars, tabs...) and anything wrong makes it give up, and the
// full YAML parser reads the file instead: it alone reports refusals and warnings. It works on
// offsets into the text and makes few objects, as a file may hold a hundred thousand rules.
import { DESCRIPTOR_FILE_KEYS, MAX_DESCRIPTOR_DEPTH } from './document';

/** A map: keys and values in turn (a value null for a key without one), and where it starts. */
export interface FastMap {
  readonly kind: 'map';
  readonly entries: readonly (string | FastNode | null)[];
  readonly line: number;
  readonly column: number;
}

export interface FastList {
  readonly kind: 'list';
  readonly items: readonly FastNode[];
}

/** A quoted scalar: always a string. */
export interface FastQuoted {
  readonly kind: 'quoted';
  readonly text: string;
}

/** A plain scalar is its text. */
export type FastNode = FastMap | FastList | FastQuoted | string;

/** The value of `key` in `map`: undefined when absent, null when written without a value. */
export function entryOf(map: FastMap, key: string): FastNode | null | undefined {
  const entries = map.entries;
  for (let i = 0; i < entries.length; i += 2) {
    if (entries[i] === key) return entries[i + 1];
  }
  return undefined;
}

/** Thrown inside the reader to give up; caught at its entry. */
class GiveUp extends Error {}

function giveUp(): never {
  throw new GiveUp();
}

/**
 * The keys this reader knows: the descriptor format's. Any other key (`quota_buckets`, a
 * misspelling) is left to the full loader, which reads or refuses it.
 */
const KNOWN_KEYS = DESCRIPTOR_FILE_KEYS;

/**
 * Block values nested deeper than this are left to the full loader: each level of descriptors
 * is two (its list and its map), a limit two more, and the loader refuses past
 * MAX_DESCRIPTOR_DEPTH levels.
 */
const MAX_BLOCK_DEPTH = 2 * MAX_DESCRIPTOR_DEPTH + 8;

/** Characters that may not start a plain scalar here: indicators, and ones that need care. */
const NOT_PLAIN_START = new Set(Array.from('&*!|>%@`?:-,[]{}#\'"', (c) => c.charCodeAt(0)));
/** Anything the reader does not handle: tabs, carriage returns, other breaks, controls, BOM. */
// eslint-disable-next-line no-control-regex
const UNHANDLED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
/** What a scalar inside a flow map may not hold here. */
const NOT_IN_FLOW = /[{}[\],"'#]/;

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;

/** The lines with content, as offsets; comment-only and blank lines are left out, as in YAML. */
interface Lines {
  /** Where the content starts (after the indent; for a list item being read, after its dash). */
  readonly starts: number[];
  /** Where the content ends, trailing spaces left out. */
  readonly ends: number[];
  /** The column (0-based) of the start. */
  readonly indents: number[];
  /** The line number (1-based). */
  readonly numbers: number[];
}

function linesOf(text: string): Lines {
  const lines: Lines = { starts: [], ends: [], indents: [], numbers: [] };
  let no = 0;
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    no += 1;
    let s = start;
    while (s < end && text.charCodeAt(s) === SPACE) s += 1;
    let e = end;
    while (e > s && text.charCodeAt(e - 1) === SPACE) e -= 1;
    if (e > s && text.charCodeAt(s) !== HASH) {
      lines.starts.push(s);
      lines.ends.push(e);
      lines.indents.push(s - start);
      lines.numbers.push(no);
    }
    start = end + 1;
  }
  return lines;
}

/** Reads one document's structure; gives up on anything unexpected. */
class BlockReader {
  private at = 0;
  /** Block values being read inside one another. */
  private depth = 0;
  private readonly count: number;

  constructor(
    private readonly text: string,
    private readonly lines: Lines,
  ) {
    this.count = lines.starts.length;
  }

  /** The document: one map from the first line, with nothing left over. */
  document(): FastMap {
    const { starts, ends } = this.lines;
    const s = starts[0] ?? 0;
    if (ends[0] === s + 3 && this.text.startsWith('---', s)) this.at = 1;
    if (this.at >= this.count || this.lines.indents[this.at] !== 0) giveUp();
    const map = this.map(0);
    if (this.at !== this.count) giveUp();
    return map;
  }

  private code(offset: number): number {
    return this.text.charCodeAt(offset);
  }

  private isItem(line: number): boolean {
    const s = this.lines.starts[line] ?? 0;
    return this.code(s) === DASH && (s + 1 === this.lines.ends[line] || this.code(s + 1) === SPACE);
  }

  /** The known key written from `s` to `end`, as the one string of KNOWN_KEYS. */
  private key(s: number, end: number): string {
    for (const key of KNOWN_KEYS)
      if (key.length === end - s && this.text.startsWith(key, s)) return key;
    return giveUp();
  }

  /** A block map whose keys sit at `indent`, starting at the current line. */
  private map(indent: number): FastMap {
    const { starts, ends, indents, numbers } = this.lines;
    const first = this.at;
    const entries: (string | FastNode | null)[] = [];
    while (this.at < this.count && (indents[this.at] ?? 0) >= indent) {
      const line = this.at;
      const s = starts[line] ?? 0;
      const e = ends[line] ?? 0;
      if (indents[line] !== indent || this.isItem(line)) giveUp();
      let colon = s;
      while (colon < e && this.code(colon) !== COLON) colon += 1;
      if (colon >= e) giveUp();
      const key = this.key(s, colon);
      if (hasKey(entries, key)) giveUp();
      let v = colon + 1;
      if (v < e && this.code(v) !== SPACE) giveUp();
      while (v < e && this.code(v) === SPACE) v += 1;
      this.at += 1;
      if (v === e || this.code(v) === HASH) {
        entries.push(key, this.block(indent));
        continue;
      }
      entries.push(key, this.inline(v, e, numbers[line] ?? 0, indent + v - s + 1));
      // A more indented line after a value on the key's line would continue it: left to YAML.
      if (this.at < this.count && (indents[this.at] ?? 0) > indent) giveUp();
    }
    return { kind: 'map', entries, line: numbers[first] ?? 0, column: (indents[first] ?? 0) + 1 };
  }

  /** The value of a key at `indent` written on the lines below it; null when there is none. */
  private block(indent: number): FastNode | null {
    if (this.at >= this.count) return null;
    const next = this.lines.indents[this.at] ?? 0;
    if (next < indent) return null;
    // Deeper than any configuration the loader takes: the full loader refuses it.
    if (this.depth >= MAX_BLOCK_DEPTH) giveUp();
    this.depth += 1;
    try {
      if (next === indent) return this.isItem(this.at) ? this.list(indent) : null;
      return this.isItem(this.at) ? this.list(next) : this.map(next);
    } finally {
      this.depth -= 1;
    }
  }

  /** Where the content from `s` to `e` ends once a trailing comment is cut off. */
  private uncommented(s: number, e: number): number {
    let end = e;
    for (let i = s + 1; i < e; i++) {
      if (this.code(i) === HASH && this.code(i - 1) === SPACE) {
        end = i;
        break;
      }
    }
    while (end > s && this.code(end - 1) === SPACE) end -= 1;
    return end;
  }

  /** True when the text from `s` to `end` holds `: ` (a map inside a plain scalar). */
  private hasMapIndicator(s: number, end: number): boolean {
    for (let i = s; i < end - 1; i++)
      if (this.code(i) === COLON && this.code(i + 1) === SPACE) return true;
    return false;
  }

  /** A value on the key's own line, from `s` to `e`, starting at `column` (1-based). */
  private inline(s: number, e: number, line: number, column: number): FastNode {
    const first = this.code(s);
    if (first === 0x22 || first === 0x27) return this.quoted(s, e);
    const end = this.uncommented(s, e);
    if (end === s + 2 && this.text.startsWith('[]', s)) return { kind: 'list', items: [] };
    if (first === 0x7b) return flowMap(this.text.slice(s, end), line, column);
    if (NOT_PLAIN_START.has(first) || this.code(end - 1) === COLON) giveUp();
    if (this.hasMapIndicator(s, end)) giveUp();
    return this.text.slice(s, end);
  }

  /** A quoted scalar from `s`, with nothing after it but a comment, or giving up. */
  private quoted(s: number, e: number): FastQuoted {
    const text = this.text.slice(s, e);
    const close = closingQuote(text);
    if (close < 0) giveUp();
    const inner = text.slice(1, close);
    const rest = text.slice(close + 1);
    const isCommentAfter = rest.startsWith(' ') && rest.trimStart().startsWith('#');
    if (inner.includes('\\') || (rest !== '' && !isCommentAfter)) giveUp();
    const isSingle = text.charAt(0) === "'";
    return { kind: 'quoted', text: isSingle ? inner.replace(/''/g, "'") : inner };
  }

  /** A block list whose dashes sit at `indent`; each item a map (block or one-line flow). */
  private list(indent: number): FastList {
    const { starts, ends, indents, numbers } = this.lines;
    const items: FastNode[] = [];
    while (this.at < this.count && (indents[this.at] ?? 0) >= indent) {
      const line = this.at;
      const s = starts[line] ?? 0;
      const e = ends[line] ?? 0;
      if (indents[line] !== indent || !this.isItem(line) || s + 1 === e) giveUp();
      let c = s + 2;
      while (c < e && this.code(c) === SPACE) c += 1;
      const column = indent + c - s;
      if (this.code(c) === 0x7b) {
        items.push(
          flowMap(this.text.slice(c, this.uncommented(c, e)), numbers[line] ?? 0, column + 1),
        );
        this.at += 1;
        if (this.at < this.count && (indents[this.at] ?? 0) > indent) giveUp();
        continue;
      }
      // The item's map starts on the dash's line, its keys in the column after the dash.
      starts[line] = c;
      indents[line] = column;
      items.push(this.map(column));
    }
    return { kind: 'list', items };
  }
}

/** Where the quote closing a quoted scalar that opens at 0 is; -1 when it does not close. */
function closingQuote(text: string): number {
  const quote = text.charAt(0);
  for (let at = text.indexOf(quote, 1); at >= 0; at = text.indexOf(quote, at + 2)) {
    // In single quotes, '' is a quote inside; in double quotes, an escape is left to YAML.
    if (quote === "'" && text.charAt(at + 1) === "'") continue;
    return at;
  }
  return -1;
}

/** A plain scalar inside a flow map. */
function flowScalar(text: string): string {
  const first = text.charCodeAt(0);
  if (NOT_PLAIN_START.has(first) || NOT_IN_FLOW.test(text) || text.endsWith(':')) giveUp();
  return text.includes(': ') ? giveUp() : text;
}

/** True when the keys of `entries` (keys and values in turn) hold `key`. */
function hasKey(entries: readonly (string | FastNode | null)[], key: string): boolean {
  for (let i = 0; i < entries.length; i += 2) if (entries[i] === key) return true;
  return false;
}

/** `{ a: b, c: d }` on one line: a map of plain scalars. */
function flowMap(text: string, line: number, column: number): FastMap {
  if (!text.endsWith('}')) giveUp();
  const inner = text.slice(1, -1).trim();
  const entries: (string | FastNode | null)[] = [];
  if (inner === '') return { kind: 'map', entries, line, column };
  for (const item of inner.split(',')) {
    const colon = item.indexOf(':');
    const written = item.slice(0, colon).trim();
    const key = KNOWN_KEYS.find((k) => k === written);
    if (colon < 0 || key === undefined || hasKey(entries, key)) giveUp();
    const value = item.slice(colon + 1);
    if (value !== '' && value.charCodeAt(0) !== SPACE) giveUp();
    const scalar = value.trim();
    entries.push(key, scalar === '' ? null : flowScalar(scalar));
  }
  return { kind: 'map', entries, line, column };
}

/** The document's top map, or undefined when the quick reader does not handle the text. */
export function readFastYaml(text: string): FastMap | undefined {
  if (UNHANDLED.test(text)) return undefined;
  try {
    return new BlockReader(text, linesOf(text)).document();
  } catch (err: unknown) {
    // A stack exhausted by nesting is the full loader's to refuse, too.
    if (err instanceof GiveUp || err instanceof RangeError) return undefined;
    throw err;
  }
}
