import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/**
 * Prisma's generated client imports its query compiler's WebAssembly as a module of base64 text (4.6 MB),
 * which the module cache would keep for the life of the process, with its source: 9 MB of an idle server's
 * 46 MB heap. scripts/prisma-generate.mjs patches the loader to read it once and let it go.
 */
const root = path.resolve(import.meta.dirname, "..");
let t: TestDatabase | undefined;
afterAll(() => t?.drop());

describe("the query compiler's WebAssembly, in the generated client", () => {
  it("when a client has run a query, then the base64 module is neither imported for good nor left in require's cache", async () => {
    const loader = readFileSync(path.join(root, "src/generated/prisma/internal/class.ts"), "utf8");
    expect(loader).not.toMatch(/await import\("@prisma\/client\/runtime\/query_compiler_[a-z_]+\.wasm-base64\.mjs"\)/);
    expect(loader).toContain("delete require.cache[id]");

    t = await createTestDatabase();
    expect(await t.db.prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    const cached = Object.keys(createRequire(import.meta.url).cache).filter((id) => id.includes("wasm-base64"));
    expect(cached).toEqual([]);
  });
});
