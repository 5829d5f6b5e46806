// Rate limit units, as the file format and the wire name them.

export const UNITS = ['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR'] as const;
export type Unit = (typeof UNITS)[number];

const BY_NAME = new Map<string, Unit>(UNITS.map((u) => [u.toLowerCase(), u]));

/** The units a file may name, for the message that refuses another. */
export const ACCEPTED_UNITS = UNITS.map((u) => u.toLowerCase()).join(', ');

/** Reads a unit name case-insensitively; undefined when it is not a unit. */
export function parseUnit(text: string): Unit | undefined {
  return BY_NAME.get(text.toLowerCase());
}

/** Fixed window lengths in seconds; MONTH is 30 days unless calendar months are on. */
export const UNIT_SECONDS: Readonly<Record<Unit, number>> = Object.freeze({
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  WEEK: 604800,
  MONTH: 2592000,
  YEAR: 31536000,
});
