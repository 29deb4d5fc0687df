import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * scripts/build.mjs --if-stale, which `npm install`, `npm start` and the CLI
 * run: it builds once, then only when src/ changed, and without TypeScript a
 * missing build says what to run. On a tiny project of its own.
 */
const root = path.resolve(import.meta.dirname, "..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function project(withTypescript: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), "build-test-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "scripts"));
  mkdirSync(path.join(dir, "src"));
  cpSync(path.join(root, "scripts/build.mjs"), path.join(dir, "scripts/build.mjs"));
  cpSync(path.join(root, "scripts/build-console.mjs"), path.join(dir, "scripts/build-console.mjs"));
  writeFileSync(path.join(dir, "package.json"), '{"name":"tiny","type":"module"}');
  writeFileSync(path.join(dir, "tsconfig.json"), '{"compilerOptions":{"target":"es2022","module":"nodenext","strict":true}}');
  writeFileSync(path.join(dir, "tsconfig.build.json"), '{"extends":"./tsconfig.json","compilerOptions":{"outDir":"dist","rootDir":"src"},"include":["src"]}');
  writeFileSync(path.join(dir, "src/main.ts"), "export const answer: number = 42;\n");
  if (withTypescript) {
    mkdirSync(path.join(dir, "node_modules"));
    symlinkSync(path.join(root, "node_modules/typescript"), path.join(dir, "node_modules/typescript"));
  }
  return dir;
}

const build = (dir: string, ...flags: string[]) => {
  const r = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale", ...flags], { cwd: dir, encoding: "utf8" });
  return { code: r.status, stderr: r.stderr };
};

describe("build once", () => {
  it("when nothing changed since the last build, then nothing is built; when src/ changed, then it builds again", () => {
    const dir = project(true);
    const first = build(dir);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stderr).toContain("Building (once");
    expect(existsSync(path.join(dir, "dist/main.js"))).toBe(true);

    expect(build(dir)).toEqual({ code: 0, stderr: "" });

    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(dir, "src/main.ts"), later, later);
    const again = build(dir);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("Building: src/ changed since the last build");
  }, 60_000);

  it("when the sources are not there yet (the Dockerfile installs before copying them), then it builds nothing and succeeds", () => {
    const dir = project(true);
    rmSync(path.join(dir, "tsconfig.json"));
    expect(build(dir)).toEqual({ code: 0, stderr: "" });
    expect(existsSync(path.join(dir, "dist"))).toBe(false);
  });

  it("when the sources do not compile, then the start fails, and npm install (--on-install) reports it without failing", () => {
    const dir = project(true);
    writeFileSync(path.join(dir, "src/main.ts"), "export const answer: number = 'forty-two';\n");
    const start = build(dir);
    expect(start.code).not.toBe(0);
    expect(start.stderr).toContain("The TypeScript build failed (above)");
    const install = build(dir, "--on-install");
    expect(install.code).toBe(0);
    expect(install.stderr).toContain("The TypeScript build failed (above)");
  }, 60_000);

  it("when there is no build and no TypeScript, then it fails saying what to run", () => {
    const result = build(project(false));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No build in dist/, and TypeScript is not installed to make one: run `npm install`, then `npm run build`.");
  });

  it("when the admin console's files change, then its bundle is built again, alone; unchanged, it is not", () => {
    const dir = project(true);
    symlinkSync(path.join(root, "node_modules/esbuild"), path.join(dir, "node_modules/esbuild"));
    mkdirSync(path.join(dir, "console/src"), { recursive: true });
    writeFileSync(path.join(dir, "console/index.html"), "<!doctype html><title>t</title>\n");
    writeFileSync(path.join(dir, "console/styles.css"), "body { margin: 0; }\n");
    writeFileSync(path.join(dir, "console/favicon.svg"), '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
    writeFileSync(path.join(dir, "console/src/main.ts"), "const n: number = 1;\ndocument.title = String(n);\n");
    expect(build(dir).code).toBe(0);
    expect(existsSync(path.join(dir, "dist/console/console.js"))).toBe(true);
    expect(existsSync(path.join(dir, "dist/console/index.html"))).toBe(true);
    expect(existsSync(path.join(dir, "dist/console/favicon.svg"))).toBe(true);
    expect(build(dir)).toEqual({ code: 0, stderr: "" });
    rmSync(path.join(dir, "dist/console/console.js"));
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(dir, "console/src/main.ts"), later, later);
    // The TypeScript build is current: only the console is built again, silently.
    expect(build(dir)).toEqual({ code: 0, stderr: "" });
    expect(existsSync(path.join(dir, "dist/console/console.js"))).toBe(true);
  }, 30_000);
});
