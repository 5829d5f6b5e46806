// The HTTP front end (express): POST /json and GET /healthcheck.
import { describeError } from '../../lib/errors';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { RateLimitEngine } from '../../engine';
import type { Logger } from '../../lib/logger';
import { toEdgeError } from '../errors';
import type { HealthState } from '../health';
import { requestFromJson, responseToJson } from '../wire/json';

export interface HttpAppOptions {
  readonly engine: RateLimitEngine;
  readonly health: HealthState;
  readonly logger: Logger;
  /** Largest accepted /json body. */
  readonly maxBodyBytes?: number;
}

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: code, message });
}

/** Builds the express application; the caller owns the listener. */
export function createHttpApp(options: HttpAppOptions): express.Express {
  const { engine, health, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthcheck', (_req, res) => {
    if (health.isHealthy()) res.status(200).type('text/plain').send('OK');
    else res.status(500).type('text/plain').send('unhealthy');
  });

  // Callers such as Lua scripts and curl often send no content type; read any body as text.
  const body = express.text({ type: () => true, limit: options.maxBodyBytes ?? 1024 * 1024 });
  app.post('/json', body, (req: Request, res: Response) => {
    const text = typeof req.body === 'string' ? req.body : '';
    let request;
    try {
      request = requestFromJson(text);
    } catch (err: unknown) {
      const edge = toEdgeError(err);
      sendError(res, edge.httpStatus, edge.code, edge.message);
      return;
    }
    engine.shouldRateLimit(request).then(
      (response) => {
        res
          .status(response.overallCode === 'OVER_LIMIT' ? 429 : 200)
          .json(responseToJson(response));
      },
      (err: unknown) => {
        const edge = toEdgeError(err);
        if (edge.kind !== 'request')
          logger.warn('rate limit request failed', {
            error: describeError(err),
          });
        sendError(res, edge.httpStatus, edge.code, edge.message);
      },
    );
  });
  app.all('/json', (_req, res) => {
    res.setHeader('Allow', 'POST');
    sendError(res, 405, 'METHOD_NOT_ALLOWED', 'use POST for /json');
  });

  // Body parser failures (too large, bad encoding) and anything else thrown by middleware.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const type = (err as { type?: unknown }).type;
      sendError(
        res,
        status,
        typeof type === 'string' ? type.toUpperCase().replace(/\./g, '_') : 'BAD_REQUEST',
        describeError(err),
      );
      return;
    }
    logger.error('unexpected error in the HTTP front end', {
      error: describeError(err),
    });
    sendError(res, 500, 'INTERNAL', 'internal error');
  });
  return app;
}
