/**
 * What a test server (startTestApp, spawnService) runs with unless the test's
 * env says otherwise: rate limits off (other tests send thousands of requests
 * with one key, or many bad keys from one address), and idle connections kept
 * longer than any test; no erasure ledger (a test of one names its own). The test's fetch (undici) reuses an idle connection
 * until its own timer says the server's keep-alive ran out; on a loaded
 * machine, with the event loop held (PGlite runs in it), the server's timer
 * can fire first, under a request just sent on it: ECONNRESET.
 */
export const TEST_SERVER_ENV = { RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0", KEEP_ALIVE_TIMEOUT_MS: "600000", ERASURE_LEDGER: "off" };
