// ConfigError and the registry of its codes: every way a configuration can be refused.

/** Every reason a configuration is refused; docs/configuration-errors.md documents each. */
export const CONFIG_ERROR_CODES = Object.freeze({
  READ_FAILED: 'the file could not be read',
  YAML_PARSE: 'the YAML does not parse',
  NOT_A_MAP: 'the document is not a map',
  KEY_NOT_STRING: 'a map key is not a string',
  UNKNOWN_KEY: 'a key is not one of the accepted keys',
  LIST_NOT_MAPS: 'a list holds something other than maps',
  BAD_VALUE: 'a value has the wrong type or range',
  EMPTY_DOMAIN: 'the domain is empty',
  EMPTY_KEY: 'a descriptor key is empty',
  DUPLICATE_DESCRIPTOR: 'two descriptors at one level share key and value',
  INVALID_UNIT: 'a unit is not second, minute, hour, day, week, month or year',
  UNLIMITED_WITH_UNIT: 'an unlimited rule also names a unit',
  EMPTY_REPLACES: 'a replaces entry has no name',
  SELF_REPLACES: 'a rule replaces itself',
  SHARE_THRESHOLD_WITHOUT_WILDCARD: 'share_threshold is set on a value without *',
  DUPLICATE_DOMAIN: 'two files define one domain while MERGE_DOMAIN_CONFIG is false',
  BAD_RESOURCE: 'an xDS resource cannot be decoded',
  INVALID_ALGORITHM: 'an algorithm is not fixed_window, sliding_window or token_bucket',
  BAD_LIMIT: 'a limit asks for what its algorithm does not have (burst, a rate of 0)',
  DUPLICATE_LIMIT_UNIT: 'two limits of one descriptor have the same unit',
  UNLIMITED_WITH_LIMITS: 'an unlimited rule also has rate_limits',
  ALGORITHM_UNSUPPORTED: 'the counter backend in use cannot run the algorithm of a rule',
  TOO_MUCH_EXPANSION: 'YAML aliases expand the file past what the loader reads',
  TOO_DEEP: 'descriptors nest deeper than the loader follows',
} as const);

export type ConfigErrorCode = keyof typeof CONFIG_ERROR_CODES;

/**
 * Where in a file a problem is: line and column 1-based, and the YAML path when known. An xDS
 * resource has no lines: its problems carry the path alone.
 */
export interface SourcePosition {
  readonly line?: number;
  readonly column?: number;
  /** The node's path from the document root, as `descriptors[0].rate_limit.unit`. */
  readonly path?: string;
}

/**
 * ` (line 4, column 17, at descriptors[0].rate_limit.unit)`, ` (at descriptors[0].rate_limit)`
 * without a line, or nothing without a position.
 */
function where(position: SourcePosition | undefined): string {
  if (position === undefined) return '';
  const path = position.path === undefined || position.path === '' ? undefined : position.path;
  if (position.line === undefined) return path === undefined ? '' : ` (at ${path})`;
  const at = path === undefined ? '' : `, at ${path}`;
  return ` (line ${position.line}, column ${position.column ?? 0}${at})`;
}

/** One reason a configuration file (or xDS resource) is refused. */
export class ConfigError extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    /** The file path or resource name the problem is in. */
    readonly source: string,
    /** What is wrong, without the source name. */
    readonly reason: string,
    readonly position?: SourcePosition,
  ) {
    super(`${source}: ${reason}${where(position)}`);
    this.name = 'ConfigError';
  }
}

/**
 * The line the service logs for a refused configuration, word for word; ratelimit-config-check
 * prints the same, so a check before a deploy reads like the log after it.
 */
export function refusalMessage(error: ConfigError): string {
  return `configuration refused: ${error.message}`;
}
