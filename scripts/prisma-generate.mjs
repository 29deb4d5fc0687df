#!/usr/bin/env node
// Runs `prisma generate` so that it also works without internet access.
//
// `prisma generate` first tries to download Prisma's native schema engine,
// although generating the client never uses it. When no engine is installed
// and none is configured, we point PRISMA_SCHEMA_ENGINE_BINARY at an existing
// executable (node itself) so that the download is skipped. On a machine that
// has the engine, nothing is changed.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const env = { ...process.env };

function engineInstalled() {
  try {
    const dir = path.dirname(require.resolve("@prisma/engines/package.json"));
    return readdirSync(dir).some((f) => f.startsWith("schema-engine"));
  } catch {
    return false;
  }
}

if (!env.PRISMA_SCHEMA_ENGINE_BINARY && !engineInstalled()) {
  env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
}

let prismaCli;
try {
  prismaCli = require.resolve("prisma/build/index.js");
} catch {
  // A production install (`npm ci --omit=dev`) has no Prisma CLI: the client
  // must have been generated at build time (see the Dockerfile).
  console.error("prisma CLI not installed: skipping client generation");
  process.exit(0);
}
const result = spawnSync(process.execPath, [prismaCli, "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
