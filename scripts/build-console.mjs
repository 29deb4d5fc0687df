#!/usr/bin/env node
// Bundles the admin console (console/) into dist/console/: index.html, console.js (esbuild: the
// TypeScript of console/src as one minified ES module), console.css. The service serves these
// files at /admin (src/admin/console.ts); nothing is fetched from elsewhere at run time.
//
//   node scripts/build-console.mjs             build
//   node scripts/build-console.mjs --if-stale  build only when a file of console/ is newer than the bundle
//
// Exported for scripts/build.mjs, which runs it with the TypeScript build.
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.resolve(import.meta.dirname, "..");
const source = path.join(root, "console");
const out = path.join(root, "dist", "console");
const STAMP = path.join(out, ".built");

function newest(dir) {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return time;
}

/** Whether the bundle is missing or older than a file of console/. */
export function consoleStale() {
  if (!existsSync(source)) return false;
  return !existsSync(STAMP) || statSync(STAMP).mtimeMs < newest(source);
}

/** Builds the bundle; false when esbuild is not installed (production dependencies only). */
export async function buildConsole() {
  let esbuild;
  try {
    esbuild = await import(pathToFileURL(createRequire(path.join(root, "package.json")).resolve("esbuild")).href);
  } catch {
    return false;
  }
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(source, "src", "main.ts")],
    bundle: true,
    format: "esm",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    minify: true,
    sourcemap: false,
    legalComments: "none",
    outfile: path.join(out, "console.js"),
    logLevel: "warning",
  });
  copyFileSync(path.join(source, "styles.css"), path.join(out, "console.css"));
  copyFileSync(path.join(source, "index.html"), path.join(out, "index.html"));
  copyFileSync(path.join(source, "favicon.svg"), path.join(out, "favicon.svg"));
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv.includes("--if-stale") && !consoleStale()) process.exit(0);
  if (!(await buildConsole())) {
    process.stderr.write("esbuild is not installed: run `npm install` to build the admin console.\n");
    process.exit(1);
  }
}
