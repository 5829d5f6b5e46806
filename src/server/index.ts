// Front ends: gRPC, HTTP and debug listeners, health, and the error mapping at the edge.
export { RateLimitGrpcServer, grpcAddress, type GrpcServerOptions } from './grpc/grpc-server';
export { createHttpHandler, type HttpAppOptions } from './http/http-server';
export { createDebugServer, type DebugSources } from './debug/debug-server';
export {
  HealthState,
  type ComponentHealth,
  type HealthComponent,
  type HealthReport,
} from './health';
export { ConfigStatus, type ConfigLoad, type ConfigRefusal } from './config-status';
export { catchStrayErrors, LastResort } from './last-resort';
export { toEdgeError, ERROR_TABLE, type EdgeError } from './errors';
export { requestFromWire, responseFromWire } from './wire/convert';
export { fromStruct } from '../lib/struct';
export { requestFromJson, responseToJson } from './wire/json';
export type * from './wire/messages';
export { createMetricsServer, type MetricsSource } from './metrics/metrics-server';
export {
  createListeners,
  openMetricsListener,
  type ListenerOptions,
  type ListenerPorts,
  type Listeners,
  type MetricsEndpoint,
  type OpenListener,
} from './listeners';
