import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // Each test file gets a database of its own (a PGlite instance, or a fresh
    // database on the PostgreSQL server named by DATABASE_URL): files run in
    // parallel, tests inside a file in order.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
