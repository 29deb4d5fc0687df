import { AsyncLocalStorage } from "node:async_hooks";

/** What every log line of a request carries: its id, and the API user once known. */
export interface RequestContext {
  requestId: string;
  user?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
