// The HTTP front end (express): POST /json and /healthcheck.
import type http from 'node:http';
import { describeError } from '../../lib/errors';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { HealthState } from '../health';
import { answerJson, type JsonAnswerDeps } from './json-answer';
import { withJsonFastPath } from './json-fast-path';

export interface HttpAppOptions extends JsonAnswerDeps {
  readonly health: HealthState;
  /** Largest accepted /json body. */
  readonly maxBodyBytes?: number;
}

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: code, message });
}

const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** The HTTP front end: plain /json calls on the fast path, everything else through express. */
export function createHttpHandler(options: HttpAppOptions): http.RequestListener {
  return withJsonFastPath(createHttpApp(options), {
    engine: options.engine,
    logger: options.logger,
    tracer: options.tracer,
    maxBodyBytes: options.maxBodyBytes ?? MAX_JSON_BODY_BYTES,
  });
}

/** The express application: /healthcheck, /json, and error answers. */
function createHttpApp(options: HttpAppOptions): express.Express {
  const { health, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Any method, as in the reference: probes such as HAProxy's httpchk send OPTIONS, and express
  // would otherwise answer OPTIONS with 200 whatever the health.
  app.all('/healthcheck', (_req, res) => {
    if (health.isHealthy()) res.status(200).type('text/plain').send('OK');
    else res.status(500).type('text/plain').send('unhealthy');
  });

  // Callers such as Lua scripts and curl often send no content type; read any body as text.
  const body = express.text({
    type: () => true,
    limit: options.maxBodyBytes ?? MAX_JSON_BODY_BYTES,
  });
  app.post('/json', body, (req: Request, res: Response) => {
    const text = typeof req.body === 'string' ? req.body : '';
    void answerJson(text, req.headers, options).then(({ status, payload }) => {
      res.status(status).json(payload);
    });
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
