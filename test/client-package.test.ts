import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makeCosmetic, unique } from "./helpers/fixtures.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
const clientDir = path.join(root, "clients/typescript");
const tsc = path.join(root, "node_modules/typescript/bin/tsc");

/** What a project of the website's team writes: it imports the package by name and calls the service. */
const CONSUMER = `
import { ApiError, createApiClient, EtagPoller, ListSync, orThrow, walkPages } from "game-community-api-client";

declare const process: { argv: string[] };
const [baseUrl, apiKey, cosmeticId] = process.argv.slice(2) as [string, string, string];
const api = createApiClient({ baseUrl, apiKey });

const maps = orThrow(await api.GET("/parkour/get-all-maps"));
const poller = new EtagPoller(api, "/cosmetic/get-cosmetic", { id: Number(cosmeticId) });
const first = await poller.poll();
const second = await poller.poll();
let paged = 0;
for await (const page of walkPages(api, "/parkour/get-all-maps", { limit: 1 })) paged += page.rows.length;
const synced = new ListSync(api, "/parkour/get-all-maps", { key: (m) => m.id });
const full = await synced.sync();
const again = await synced.sync();
const missing = await api.GET("/cosmetic/get-cosmetic", { params: { query: { id: 999999 } } });
let thrown: ApiError | undefined;
try {
  orThrow(missing);
} catch (error) {
  if (error instanceof ApiError) thrown = error;
}
console.log(JSON.stringify({
  mapNames: maps.map((m) => m.name),
  paged,
  synced: { full: full.full, rows: synced.rows.size, again: again.full },
  first: first.changed ? { price: first.data.price, etag: first.etag } : null,
  second,
  missing: { status: missing.response.status, error: missing.error },
  thrown: thrown && { status: thrown.status, message: thrown.message, requestId: thrown.requestId },
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    types: [],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    outDir: "out",
  },
  files: ["consumer.ts"],
};

/**
 * The client as its users get it: packed into a tarball (its build runs), installed into a project of
 * its own in a temporary folder (openapi-fetch comes from the registry, or npm's cache), type-checked
 * there, and run against a live service. It does not depend on the database, so it runs once, on the
 * embedded one.
 */
describe.skipIf(process.env.DATABASE_URL)("the TypeScript client package", () => {
  let t: TestApp;
  let scratch: string;
  beforeAll(async () => {
    t = await startTestApp();
    scratch = await mkdtemp(path.join(tmpdir(), "client-package-"));
  });
  afterAll(async () => {
    await t.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it("when packed and installed into a project of its own, then it type-checks there and calls the service: 200 with data, 304 with the ETag, a 404 as {code, message}", async () => {
    await run("npm", ["pack", "--silent", "--pack-destination", scratch], { cwd: clientDir });
    const tarball = (await readdir(scratch)).find((f) => f.endsWith(".tgz"))!;
    expect(tarball).toMatch(/^game-community-api-client-[\d.]+\.tgz$/);
    await writeFile(path.join(scratch, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", `./${tarball}`], { cwd: scratch });
    // Only the client and openapi-fetch's own: none of the service's dependencies come along.
    const installed = (await readdir(path.join(scratch, "node_modules"))).filter((d) => !d.startsWith("."));
    expect(installed.sort()).toEqual(["game-community-api-client", "openapi-fetch", "openapi-typescript-helpers"]);

    await writeFile(path.join(scratch, "consumer.ts"), CONSUMER);
    await writeFile(path.join(scratch, "tsconfig.json"), JSON.stringify(TSCONFIG));
    await run(process.execPath, [tsc, "-p", scratch]);

    const name = unique("Packed ");
    await t.database.db.prisma.parkourMap.create({ data: { name } });
    const cosmetic = await makeCosmetic(t.database.db.prisma, { price: 120 });
    const key = await t.key("user-A");
    const { stdout } = await run(process.execPath, [path.join(scratch, "out/consumer.js"), `${t.url}/api`, key, String(cosmetic.id)]);
    const seen = JSON.parse(stdout) as {
      mapNames: string[];
      paged: number;
      synced: { full: boolean; rows: number; again: boolean };
      first: { price: number; etag: string };
      second: unknown;
      missing: unknown;
      thrown: { status: number; message: string; requestId: string };
    };
    expect(seen.mapNames).toContain(name);
    expect(seen.paged).toBe(seen.mapNames.length);
    expect(seen.synced).toEqual({ full: true, rows: seen.mapNames.length, again: false });
    expect(seen.first.price).toBe(120);
    expect(seen.second).toEqual({ changed: false, etag: seen.first.etag });
    expect(seen.missing).toEqual({ status: 404, error: { code: 404, message: "Cosmetic not found" } });
    expect(seen.thrown).toMatchObject({ status: 404, message: "Cosmetic not found", requestId: expect.any(String) });
  }, 180_000);
});
