import { defineConfig } from "vitest/config";
import { requireSupportedNode } from "./src/core/node-support.js";

// On a Node.js the service does not support, one line and no run (package.json's engines).
requireSupportedNode();

// PostgreSQL and Redis tests run when their server is named (helpers/redis.ts); TEST_DATABASE_URL stands for DATABASE_URL.
if (process.env.TEST_DATABASE_URL?.trim()) process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // The container paths have their own run (vitest.containers.config.ts, npm run test:containers).
    exclude: ["**/node_modules/**", "test/containers/**"],
    // Each test file gets a database of its own (a PGlite instance, or a fresh
    // database on the PostgreSQL server named by DATABASE_URL): files run in
    // parallel, tests inside a file in order.
    pool: "forks",
    // This run's temporary folder, and whatever the tests left running killed at the end (run-scope.ts);
    // on PGlite, one migrated database per run, loaded by each file (createTestDatabase).
    globalSetup: ["./test/helpers/run-scope.ts", "./test/helpers/pglite-template.ts"],
    maxWorkers: 2,
    // Bounds for a hang, not for a slow machine: tests wait for events, and none is timed.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The second one says at the end which tests were skipped, why, and how to run them, and names the slowest files.
    reporters: ["default", "./test/helpers/skip-summary.ts"],
  },
});
