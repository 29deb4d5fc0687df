import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // Each test file gets a database of its own (a PGlite instance, or a fresh
    // database on the PostgreSQL server named by DATABASE_URL): files run in
    // parallel, tests inside a file in order.
    pool: "forks",
    // On PGlite, one migrated database per run, loaded by each file (createTestDatabase).
    globalSetup: ["./test/helpers/pglite-template.ts"],
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The second one says at the end which tests were skipped, why, and how to run them.
    reporters: ["default", "./test/helpers/skip-summary.ts"],
  },
});
