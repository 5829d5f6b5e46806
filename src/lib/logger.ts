// Logging seam and its winston implementation, in the reference service's text and JSON formats.
import winston from 'winston';

/** Fields attached to one log line. Never put secrets in them. */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

/** The logging seam; every module gets one injected. */
export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  /** True when debug lines are written; guard costly debug messages with it. */
  readonly isDebugEnabled: boolean;
}

/** The level names the reference accepts (logrus), most severe first. */
export const LOG_LEVELS = ['panic', 'fatal', 'error', 'warning', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'text' | 'json';

const WINSTON_LEVELS: Readonly<Record<LogLevel, number>> = Object.freeze({
  panic: 0,
  fatal: 1,
  error: 2,
  warning: 3,
  info: 4,
  debug: 5,
  trace: 6,
});

function quoteIfNeeded(value: string): string {
  return /^[A-Za-z0-9_./:@-]+$/.test(value) ? value : JSON.stringify(value);
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined ? '' : JSON.stringify(value);
}

const textFormat = winston.format.printf((info) => {
  const { level, message, timestamp, ...fields } = info;
  let line = `time=${quoteIfNeeded(text(timestamp))} level=${level} msg=${JSON.stringify(text(message))}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    line += ` ${key}=${quoteIfNeeded(text(value))}`;
  }
  return line;
});

const jsonFormat = winston.format.printf((info) => {
  const { level, message, timestamp, ...fields } = info;
  return jsonLine(timestamp, level, message, fields);
});

function jsonLine(timestamp: unknown, level: string, message: unknown, fields: object): string {
  return JSON.stringify({ '@timestamp': timestamp, level, '@message': message, ...fields });
}

/**
 * Writes a line the process writes whatever LOG_LEVEL says, about the process itself: a signal,
 * a fatal start-up error, an error while stopping. It is written at once (standard error is
 * synchronous on pipes and files), so it is out before process.exit. In LOG_FORMAT=json it is
 * a line as the logger writes it, so that every line parses; in text, the plain
 * `ratelimit: message` of a command-line program, as a refused setting has always been shown.
 */
export function writeProcessLine(
  format: LogFormat,
  level: LogLevel,
  message: string,
  stream: Pick<NodeJS.WritableStream, 'write'> = process.stderr,
): void {
  stream.write(
    format === 'json'
      ? `${jsonLine(new Date().toISOString(), level, message, {})}\n`
      : `ratelimit: ${message}\n`,
  );
}

/** Options of the winston logger. */
export interface WinstonLoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where lines go; standard error by default, as the reference writes. */
  readonly stream?: NodeJS.WritableStream;
}

/** Builds the process logger. */
export function createLogger(options: WinstonLoggerOptions): Logger {
  const logger = winston.createLogger({
    levels: WINSTON_LEVELS,
    level: options.level,
    format: winston.format.combine(
      winston.format.timestamp(),
      options.format === 'json' ? jsonFormat : textFormat,
    ),
    transports: [
      // winston's own transport class; the rule cannot see through its type declarations.
      // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
      new winston.transports.Stream({ stream: options.stream ?? process.stderr }),
    ],
  });
  const isDebugEnabled = WINSTON_LEVELS[options.level] >= WINSTON_LEVELS.debug;
  const write = (level: LogLevel, message: string, fields?: LogFields): void => {
    logger.log(level, message, fields ?? {});
  };
  return {
    error: (message, fields) => {
      write('error', message, fields);
    },
    warn: (message, fields) => {
      write('warning', message, fields);
    },
    info: (message, fields) => {
      write('info', message, fields);
    },
    debug: (message, fields) => {
      if (isDebugEnabled) write('debug', message, fields);
    },
    isDebugEnabled,
  };
}

/** A logger that drops everything; for tools and tests that do not care. */
export const silentLogger: Logger = Object.freeze({
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  isDebugEnabled: false,
});

/** A logger that keeps lines in memory; for tests that assert on logging. */
export class MemoryLogger implements Logger {
  readonly lines: { level: string; message: string; fields: LogFields | undefined }[] = [];
  readonly isDebugEnabled = true;

  error(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', message, fields });
  }
  warn(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'warning', message, fields });
  }
  info(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', message, fields });
  }
  debug(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'debug', message, fields });
  }
}
