import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The operator's container paths (test/containers/): `npm run test:containers`, as root with podman. Apart from
// `npm test`: they build images and start compose projects, minutes of a run, and need what a laptop lacks.
export default defineConfig({
  test: {
    ...base.test,
    include: ["test/containers/**/*.test.ts"],
    exclude: [],
    // One project at a time: two image builds at once only slow each other.
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 1_500_000,
  },
});
