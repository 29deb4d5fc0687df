import net from "node:net";

/**
 * The Redis of the Redis tests, run only when one is named, as PostgreSQL's
 * run only with DATABASE_URL: TEST_REDIS_URL, REDIS_TEST_URL or REDIS_URL. A
 * Redis that merely answers on this machine's 6379 is not used. Named but not
 * answering fails the file: a run asked for Redis must not pass without it.
 */
export const redisTestUrl = [process.env.TEST_REDIS_URL, process.env.REDIS_TEST_URL, process.env.REDIS_URL].map((u) => u?.trim()).find(Boolean);

export const redisAvailable = redisTestUrl !== undefined && (await reachable(redisTestUrl));
if (redisTestUrl && !redisAvailable) throw new Error(`Redis tests: nothing answers at ${redisTestUrl}`);
if (!redisTestUrl && process.env.REQUIRE_REDIS) throw new Error("REQUIRE_REDIS is set, and no REDIS_TEST_URL names the Redis to test with");

/** The URL, in a test that runs only when redisAvailable. */
export const REDIS_URL = redisTestUrl ?? "redis://redis-tests-are-off.invalid:6379";

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname);
    socket.setTimeout(5_000, () => (socket.destroy(), resolve(false)));
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}
