import { AsyncLocalStorage } from "node:async_hooks";

/** What every log line of a request carries: its id, and the API user once known. */
export interface RequestContext {
  requestId: string;
  user?: string;
  /** The request's trace and span, when tracing is on (core/tracing.ts). */
  traceId?: string;
  spanId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
