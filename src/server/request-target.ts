// The request target of a plain HTTP listener (debug, metrics), parsed without throwing.
import type http from 'node:http';

/**
 * The target as a URL, or undefined when it is not one (`//`, an empty host, a bad escape):
 * the listener answers 400 instead of letting the URL parser's exception escape.
 */
export function parseTarget(req: http.IncomingMessage, base: string): URL | undefined {
  try {
    return new URL(req.url ?? '/', base);
  } catch {
    return undefined;
  }
}
