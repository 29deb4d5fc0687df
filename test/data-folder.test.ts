import { chmodSync, chownSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPaths } from "../src/cli/control-protocol.js";
import { TIGHTENED_WARNING } from "../src/db/open.js";
import { onPostgres } from "./helpers/database.js";
import { type ServiceProcess, spawnService } from "./helpers/process.js";

/**
 * The embedded data folder holds players' tokens and addresses (the WAL too)
 * and the database's own settings: it is the owner's alone, whatever the
 * umask the server starts under, including what PGlite writes later.
 */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "data-folder-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = (dataDir: string) => ({ DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "" });

/** Every entry under `root` whose mode is not the owner's alone (0700 folders, 0600 files and sockets). */
function looser(root: string): string[] {
  const found: string[] = [];
  const visit = (entry: string) => {
    const stat = lstatSync(entry);
    const expected = stat.isDirectory() ? 0o700 : 0o600;
    if ((stat.mode & 0o777) !== expected) found.push(`${path.relative(root, entry) || "."} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(entry)) visit(path.join(entry, name));
  };
  visit(root);
  return found;
}

/** Every entry under `root` opened to all (0777 folders, 0666 files), as an older version left them. */
function loosen(root: string): void {
  const stat = lstatSync(root);
  chmodSync(root, stat.isDirectory() ? 0o777 : 0o666);
  if (stat.isDirectory()) for (const name of readdirSync(root)) loosen(path.join(root, name));
}

async function writeSome(service: ServiceProcess): Promise<void> {
  const url = `http://127.0.0.1:${await service.port()}`;
  const key = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(service.output())![1]!;
  const res = await request(url).post("/api/inscription").set("X-API-Key", key).send({ username: "modes" });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

describe.runIf(!onPostgres)("the embedded data folder", () => {
  it("when the server starts under umask 022 and writes, then every folder in DATA_DIR is 0700 and every file 0600, before and after it stops", async () => {
    const data = path.join(dir, "fresh");
    const service = spawnService(env(data), { umask: "022" });
    try {
      await writeSome(service);
      expect(looser(data)).toEqual([]);
      expect(lstatSync(controlPaths(data).socket).isSocket()).toBe(true);
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expect(readdirSync(path.join(data, "pglite", "pg_wal")).length).toBeGreaterThan(0);
    expect(looser(data)).toEqual([]);
  }, 60_000);

  it("when a folder left open to all by an earlier version is started on, then it is tightened with one warning line", async () => {
    const data = path.join(dir, "fresh");
    loosen(data);
    expect(looser(data).length).toBeGreaterThan(100);
    const service = spawnService(env(data), { umask: "000" });
    try {
      await service.port();
      const warnings = service.lines().filter((l) => l.msg === TIGHTENED_WARNING);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.tightened).toBeGreaterThan(100);
      expect(looser(data)).toEqual([]);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  }, 60_000);

  it.runIf(process.getuid?.() === 0)(
    "when DATA_DIR belongs to another user who may write it, then the server serves but opens no control channel there",
    async () => {
      const data = mkdtempSync(path.join(dir, "foreign-"));
      chownSync(data, 65534, 65534);
      chmodSync(data, 0o777);
      const service = spawnService(env(data));
      try {
        await service.port();
        await service.waitFor("the refusal", () => service.output().includes("no control channel for the CLI"));
        expect(service.output()).toContain("belongs to another user (uid 65534)");
        expect(() => lstatSync(controlPaths(data).socket)).toThrow();
      } finally {
        expect(await service.stop()).toBe(0);
      }
    },
    60_000,
  );
});
