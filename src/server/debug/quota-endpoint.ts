// `/rlqs`: the quota service as operators see it: each bucket rule with its budget, the buckets
// it governs and the Envoys watching each one with their share and reported demand.
import type { QuotaView } from '../../quota';
import { sendJson, type Endpoint } from './endpoint';

/** The endpoint over a view read at each request. */
export function quotaEndpoint(view: () => QuotaView): Endpoint {
  return {
    path: '/rlqs',
    help: 'JSON: RLQS bucket rules with their budgets, the Envoys watching each bucket with their share and demand, and buckets without a rule',
    handle: (_req, res) => {
      sendJson(res, 200, view());
    },
  };
}
