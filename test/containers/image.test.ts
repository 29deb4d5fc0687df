import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerDatabase, onPostgres } from "../helpers/database.js";
import { freePort } from "../helpers/process.js";
import { ensureStandIns, imageSize, LIMITS, podman, podmanAvailable, podmanOk, until } from "./podman.js";

/**
 * The container image as docs/OPERATIONS.md ("Docker") has an operator build and run it, with podman in
 * Docker's place (no engine runs here): the Dockerfile unchanged, built FROM a stand-in for
 * node:24-bookworm-slim (stand-ins.sh says what the stand-ins are and are not), run against this machine's
 * PostgreSQL. The first start's key read from the container's log, a route called with it, a CLI command
 * run inside the container, the HEALTHCHECK, `podman stop`; and the starts that must fail in one line.
 */
const IMAGE = "localhost/game-community-api:ci";
const BASE = "docker.io/library/node:24-bookworm-slim";
const names: string[] = [];
const name = (what: string) => {
  const n = `gca-${what}-${randomBytes(3).toString("hex")}`;
  names.push(n);
  return n;
};

describe.runIf(podmanAvailable && onPostgres)("the container image, built and run with podman, on PostgreSQL", () => {
  beforeAll(async () => {
    await ensureStandIns();
    await podmanOk("build", "--format", "docker", "--network", "host", ...LIMITS, "-t", IMAGE, ".");
  }, 1_200_000);
  afterAll(async () => {
    if (names.length) await podman("rm", "-f", "-v", "-t", "0", ...names);
  });

  it("when built, then it adds less than 200 MB to its base image", async () => {
    const added = (await imageSize(IMAGE)) - (await imageSize(BASE));
    console.log(`the image adds ${(added / 1e6).toFixed(0)} MB to ${BASE}`);
    expect(added).toBeLessThan(200e6);
    // Production dependencies only: neither the Prisma CLI nor TypeScript.
    const modules = await podmanOk("run", "--rm", ...LIMITS, "--entrypoint", "ls", IMAGE, "node_modules", "node_modules/.bin");
    expect(modules.split("\n")).not.toContain("prisma");
    expect(modules.split("\n")).not.toContain("typescript");
    expect(modules.split("\n")).toContain("express");
  });

  it("when run with DATABASE_URL, then it prints the first key, serves with it, runs the CLI inside, is healthy, and stops gracefully", async () => {
    const database = await createServerDatabase();
    const container = name("serve");
    try {
      const port = await freePort();
      await podmanOk(
        "run",
        "-d",
        "--name",
        container,
        "--network",
        "host",
        ...LIMITS,
        "-e",
        `DATABASE_URL=${database.url}`,
        "-e",
        `PORT=${port}`,
        "-e",
        "HOST=127.0.0.1",
        "-e",
        "METRICS_PORT=off",
        IMAGE,
      );
      const logs = async () => {
        const { stdout, stderr } = await podman("logs", container);
        return stdout + stderr;
      };
      await until("listening line", async () => /listening on http:\/\/127\.0\.0\.1:\d+\/api/.test(await logs()));
      const key = /First start: created the API user 'user-A'[\s\S]*?\n\s+(gsk_[A-Za-z0-9_-]{43})\n/.exec(await logs())?.[1];
      expect(key, await logs()).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/api/player/get-all-players`, { headers: { "X-API-Key": key! } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);

      // An operator command inside the running container, as OPERATIONS.md gives it.
      const created = await podman("exec", container, "node", "dist/cli/main.js", "user", "create", "user-B");
      expect(created.code, created.stderr).toBe(0);
      const keyB = /^(gsk_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
      expect(keyB).toBeDefined();
      const asB = await fetch(`http://127.0.0.1:${port}/api/player/get-all-players`, { headers: { "X-API-Key": keyB! } });
      expect(asB.status).toBe(200);

      // The image's HEALTHCHECK, run by podman as the engine would run it.
      expect((await podman("healthcheck", "run", container)).code).toBe(0);

      await podmanOk("stop", "-t", "30", container);
      expect((await podmanOk("inspect", "--format", "{{.State.ExitCode}}", container)).trim()).toBe("0");
      expect(await logs()).toMatch(/"graceful":true,"msg":"stopped"/);
    } finally {
      await podman("rm", "-f", "-v", "-t", "0", container);
      await database.drop();
    }
  });

  /** A start that cannot succeed: the container's one line on its output, and a non-zero exit. */
  const refused = async (...args: string[]) => {
    const result = await podman(
      "run",
      "--rm",
      "--no-healthcheck",
      "--network",
      "host",
      ...LIMITS,
      "-e",
      "HOST=127.0.0.1",
      "-e",
      `PORT=${await freePort()}`,
      ...args,
      IMAGE,
    );
    return { code: result.code, lines: (result.stdout + result.stderr).split("\n").filter(Boolean) };
  };

  it("when DATABASE_URL names a server that is not there, then one line says so and the container exits 1", async () => {
    const port = await freePort();
    const { code, lines } = await refused("-e", `DATABASE_URL=postgresql://community:secret@127.0.0.1:${port}/community`);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `Cannot reach the PostgreSQL server at 127.0.0.1:${port} (DATABASE_URL): connection refused. Is PostgreSQL running there, and are the host and port in DATABASE_URL right?`,
    ]);
  });

  it("when /data is mounted read-only, then one line says so and the container exits 1", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ro-volume-"));
    try {
      // The image's user's own folder (uid 1000, owner-only), so that only the mount refuses the writes.
      chmodSync(dir, 0o700);
      chownSync(dir, 1000, 1000);
      const { code, lines } = await refused("-v", `${dir}:/data:ro`);
      expect(code).toBe(1);
      expect(lines).toEqual([expect.stringMatching(/^The data folder \/data \(DATA_DIR\) is on a read-only file system: mount it read-write/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("when DATA_DIR names a folder the image's user cannot create, then one line says so and the container exits 1", async () => {
    const { code, lines } = await refused("-e", "DATA_DIR=/srv/community/data");
    expect(code).toBe(1);
    expect(lines).toEqual([
      expect.stringMatching(
        /^The data folder \/srv\/community\/data \(DATA_DIR\) cannot be created or written by this process \(uid 1000\): permission denied/,
      ),
    ]);
  });
});
