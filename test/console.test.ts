import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_DIR, CONSOLE_POLICY } from "../src/admin/console.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

/** The console's files as the service serves them (the browser test drives the page itself). */
let t: TestApp;
beforeAll(async () => {
  const built = spawnSync(process.execPath, ["scripts/build-console.mjs", "--if-stale"], { encoding: "utf8" });
  expect(built.status, built.stderr).toBe(0);
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe("the admin console's files", () => {
  it("when /admin is loaded without a key, then the page comes with a policy that allows its own files only, no inline script or style", async () => {
    const res = await request(t.url).get("/admin");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["content-security-policy"]).toBe(CONSOLE_POLICY);
    expect(CONSOLE_POLICY).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.text).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);
    for (const asset of res.text.matchAll(/(?:src|href)="(?!data:|#)([^"]+)"/g)) {
      // Relative to the page, so that it works behind a path prefix.
      expect(asset[1]).toMatch(/^admin\/assets\//);
      const file = await request(t.url).get(`/${asset[1]}`);
      expect(file.status, asset[1]).toBe(200);
      expect(file.headers["content-security-policy"]).toBe(CONSOLE_POLICY);
    }
  });

  it("when the bundle is asked for, then it is the built file; anything else under /admin is a 404, and /admin/ leads to /admin", async () => {
    const js = await request(t.url).get("/admin/assets/console.js");
    expect(js.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(js.text).toBe(readFileSync(path.join(CONSOLE_DIR, "console.js"), "utf8"));
    for (const other of ["/admin/assets/.built", "/admin/assets/index.html", "/admin/assets/../../package.json", "/admin/x"]) {
      expect((await request(t.url).get(other)).status, other).toBe(404);
    }
    const slash = await request(t.url).get("/admin/");
    expect([slash.status, slash.headers.location]).toEqual([301, "../admin"]);
  });
});
