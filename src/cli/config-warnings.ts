// What ratelimit-config-check warns about beyond the loader's own warnings: files the service
// would accept but that almost certainly do not mean what they say.
import { isMap, isSeq, LineCounter, parseDocument, type YAMLMap } from 'yaml';

/** Where a YAML node starts, as the loader's messages say it. */
function at(lines: LineCounter, node: YAMLMap): string {
  const offset = node.range?.[0];
  if (offset === undefined) return '';
  const { line, col } = lines.linePos(offset);
  return ` (line ${line}, column ${col})`;
}

/** A limit block without requests_per_unit is a limit of 0: it refuses every request. */
function limitWarning(file: string, path: string, block: unknown, lines: LineCounter): string[] {
  if (!isMap(block) || block.get('unlimited') === true || block.has('requests_per_unit')) return [];
  return [
    `${file}: ${path} has no requests_per_unit, so its limit is 0 and it refuses every request; write requests_per_unit: 0 if that is meant${at(lines, block)}`,
  ];
}

function descriptorWarnings(
  file: string,
  list: unknown,
  path: string,
  lines: LineCounter,
): string[] {
  if (!isSeq(list)) return [];
  return list.items.flatMap((item, i) => {
    if (!isMap(item)) return [];
    const here = `${path}[${i}]`;
    const listed = item.get('rate_limits');
    return [
      ...limitWarning(file, `${here}.rate_limit`, item.get('rate_limit'), lines),
      ...(isSeq(listed)
        ? listed.items.flatMap((l, j) => limitWarning(file, `${here}.rate_limits[${j}]`, l, lines))
        : []),
      ...descriptorWarnings(file, item.get('descriptors'), `${here}.descriptors`, lines),
    ];
  });
}

/** The limits of one file that have no requests_per_unit; none when it does not parse. */
export function missingRequestsPerUnit(file: string, text: string): string[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0 || !isMap(doc.contents)) return [];
  return descriptorWarnings(file, doc.contents.get('descriptors'), 'descriptors', lines);
}

/** A directory the service would load nothing from, and files it would not read. */
export function directoryWarnings(
  dir: string,
  files: readonly string[],
  skipped: readonly string[],
): string[] {
  const out: string[] = [];
  if (files.length === 0)
    out.push(`${dir}: no .yaml or .yml file, so the service would load no rule and limit nothing`);
  for (const file of skipped)
    out.push(`${file}: not a .yaml or .yml file, so the service does not read it`);
  return out;
}
