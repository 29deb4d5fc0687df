import { errors } from "../errors.js";

/** Handler of a route declared with its callers but not served yet: 501 behind the same checks. */
export function notImplemented(): Promise<never> {
  return Promise.reject(errors.notImplemented());
}
