import type { Logger } from "./logger.js";

/**
 * A warning logged at most once per interval. An outage (Redis down, say)
 * fails every request or reconnection attempt: one line per failure would
 * drown the log, so the first is written at once and the next after the
 * interval, with the number left out in between.
 */
export function throttledWarning(logger: Logger, message: string, intervalMs = 30_000): (err: unknown) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (err) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      suppressed += 1;
      return;
    }
    logger.warn({ err, suppressed }, message);
    lastAt = now;
    suppressed = 0;
  };
}
