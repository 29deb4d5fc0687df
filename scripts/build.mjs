#!/usr/bin/env node
// Compiles src/ into dist/ (tsc -p tsconfig.build.json) and stamps the build; bundles the admin
// console (console/ → dist/console/, scripts/build-console.mjs) when it changed.
//
//   node scripts/build.mjs             build
//   node scripts/build.mjs --if-stale  build only when a file of src/ (or a tsconfig) is newer than
//                                      the last build; what `npm install`, `npm start` and the CLI run,
//                                      so that nobody waits for tsc twice and nobody runs an old build.
//   --on-install                       (with --if-stale) a failed build does not fail `npm install`:
//                                      it is reported, and the next start tries again.
//
// Without TypeScript (production dependencies only) it builds nothing: a missing build then says
// how to make one.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildConsole, consoleStale } from "./build-console.mjs";

const root = path.resolve(import.meta.dirname, "..");
// `npm start`, `npm run cli` and `npm run build` on an unsupported Node.js: one line, before any work. At
// `npm install` (--on-install) src/ may not be there yet (the Dockerfile installs before copying it).
const nodeSupport = path.join(root, "src", "core", "node-support.js");
if (!onInstallArg() && existsSync(nodeSupport)) (await import(pathToFileURL(nodeSupport).href)).requireSupportedNode();
function onInstallArg() {
  return process.argv.includes("--on-install");
}
const STAMP = path.join(root, "dist", ".built");
const ifStale = process.argv.includes("--if-stale");
const onInstall = process.argv.includes("--on-install");

function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(path.join(root, "src"));
  for (const f of ["tsconfig.json", "tsconfig.build.json"]) newest = Math.max(newest, statSync(path.join(root, f)).mtimeMs);
  return newest;
}

function typescript() {
  try {
    return createRequire(path.join(root, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    return undefined;
  }
}

// Sources not there (yet): the Dockerfile installs before it copies src/ and the tsconfig files,
// and its runtime image holds dist/ alone. Nothing to compare, nothing to build.
if (ifStale && !["src/main.ts", "tsconfig.json", "tsconfig.build.json"].every((f) => existsSync(path.join(root, f)))) process.exit(0);

// The admin console's bundle (console/ → dist/console/), by esbuild: a second or less.
if (!ifStale || consoleStale()) {
  try {
    if (!(await buildConsole()) && !existsSync(path.join(root, "dist", "console", "index.html"))) {
      process.stderr.write("The admin console is not built, and esbuild is not installed to build it: run `npm install`, then `npm run build`.\n");
    }
  } catch (error) {
    process.stderr.write(`The admin console's build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!onInstall) process.exit(1);
  }
}

const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : 0;
if (ifStale && built >= newestSource()) process.exit(0);

const tsc = typescript();
if (!tsc) {
  if (built > 0) process.exit(0); // A build exists; without TypeScript it cannot be renewed.
  process.stderr.write("No build in dist/, and TypeScript is not installed to make one: run `npm install`, then `npm run build`.\n");
  process.exit(1);
}
if (ifStale) process.stderr.write(built ? "Building: src/ changed since the last build…\n" : "Building (once; later starts reuse the build)…\n");
const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
if (result.status !== 0) {
  process.stderr.write("The TypeScript build failed (above); fix it, or run `npm run build` to see it again.\n");
  process.exit(onInstall ? 0 : (result.status ?? 1));
}
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
