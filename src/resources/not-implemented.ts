import { errors } from "../errors.js";

/** Handler of a route declared with its callers but not served yet: 501 behind the same checks. */
export async function notImplemented(): Promise<never> {
  throw errors.notImplemented();
}
