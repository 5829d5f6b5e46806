// Reads Prometheus exposition text into samples, labels sorted, for exact comparisons.

/** `name{a="1",b="2"}` (labels sorted; empty ones left out, as Prometheus reads them) to value. */
export function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const labels = (match[3] ?? '')
      .split(/,(?=[a-zA-Z_][a-zA-Z0-9_]*=")/)
      .filter((l) => l !== '' && !l.endsWith('=""'))
      .sort();
    samples.set(
      labels.length === 0 ? (match[1] ?? '') : `${match[1] ?? ''}{${labels.join(',')}}`,
      Number(match[4]),
    );
  }
  return samples;
}
