// The HTTP front end (express): POST /json, /healthcheck (readiness) and /livez (liveness).
import type http from 'node:http';
import { describeError } from '../../lib/errors';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { RateLimitEngine } from '../../engine';
import type { Logger } from '../../lib/logger';
import type { RequestLimits } from '../../settings';
import type { RequestTracer } from '../../tracing';
import type { HealthState } from '../health';
import type { LastResort } from '../last-resort';
import { answerJson, type JsonAnswering } from './json-answer';
import { sendInternalError, withJsonFastPath } from './json-fast-path';

export interface HttpAppOptions {
  readonly engine: Pick<RateLimitEngine, 'shouldRateLimit'>;
  readonly health: HealthState;
  readonly logger: Logger;
  /** The request limits; MAX_REQUEST_BYTES is the largest accepted /json body. */
  readonly limits: RequestLimits;
  readonly lastResort: LastResort;
  /** Server spans; undefined while tracing is off. */
  readonly tracer: RequestTracer | undefined;
}

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: code, message });
}

/** The HTTP front end: plain /json calls on the fast path, everything else through express. */
export function createHttpHandler(options: HttpAppOptions): http.RequestListener {
  const { engine, logger, limits, lastResort, tracer } = options;
  const answering: JsonAnswering = { engine, logger, limits, tracer };
  return withJsonFastPath(createHttpApp(options, answering), {
    answering,
    lastResort,
    maxBodyBytes: limits.maxRequestBytes,
  });
}

/** The express application: /healthcheck, /livez, /json, and error answers. */
function createHttpApp(options: HttpAppOptions, answering: JsonAnswering): express.Express {
  const { health, lastResort } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Any method, as in the reference: probes such as HAProxy's httpchk send OPTIONS, and express
  // would otherwise answer OPTIONS with 200 whatever the health.
  app.all('/healthcheck', (_req, res) => {
    if (health.isHealthy()) res.status(200).type('text/plain').send('OK');
    else res.status(500).type('text/plain').send('unhealthy');
  });

  // Liveness, apart from health: 200 whenever the process answers, so a probe restarts a stuck
  // process but not one whose backend or configuration is missing (readiness is /healthcheck).
  app.all('/livez', (_req, res) => {
    res.status(200).type('text/plain').send('OK');
  });

  // Callers such as Lua scripts and curl often send no content type; read any body as text.
  const body = express.text({
    type: () => true,
    limit: options.limits.maxRequestBytes,
  });
  app.post('/json', body, (req: Request, res: Response) => {
    const text = typeof req.body === 'string' ? req.body : '';
    answerJson(text, req.headers, answering)
      .then(({ status, payload }) => {
        res.status(status).json(payload);
      })
      .catch((err: unknown) => {
        lastResort.report(err, 'POST /json');
        sendInternalError(res);
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
    lastResort.report(err, 'HTTP listener');
    sendInternalError(res);
  });
  return app;
}
