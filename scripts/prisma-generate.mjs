#!/usr/bin/env node
// Runs `prisma generate` so that it also works without internet access.
//
// `prisma generate` first tries to download Prisma's native schema engine,
// although generating the client never uses it. When no engine is installed
// and none is configured, we point PRISMA_SCHEMA_ENGINE_BINARY at an existing
// executable (node itself) so that the download is skipped. On a machine that
// has the engine, nothing is changed.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const PATCHED = "Patched by scripts/prisma-generate.mjs: read once, then dropped from the module cache";
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
if (result.status === 0) loadQueryCompilerOnce(path.resolve(import.meta.dirname, "../src/generated/prisma/internal/class.ts"));
process.exit(result.status ?? 1);

/**
 * The generated client imports its query compiler as a module that exports the WebAssembly in base64 (4.6 MB):
 * kept by the module cache, with the module's source, another 4.6 MB, for the life of the process: a fifth of an
 * idle server's heap. Patched to read it through require() and drop it from the cache once compiled, so that
 * both are collected. test/prisma-client.test.ts checks the patch is there.
 */
function loadQueryCompilerOnce(file) {
  const text = readFileSync(file, "utf8");
  const imported = /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_[a-z_]+\.postgresql\.wasm-base64)\.mjs"\)/;
  const found = imported.exec(text);
  if (!found) {
    if (!text.includes(PATCHED))
      console.warn(`${file}: the query compiler's loader is not the one expected: not patched (an idle server's heap keeps 9 MB more)`);
    return;
  }
  writeFileSync(
    file,
    text.replace(
      found[0],
      [
        `// ${PATCHED}`,
        `    const { createRequire } = await import("node:module")`,
        `    const require = createRequire(import.meta.url)`,
        `    const id = require.resolve("${found[1]}.js")`,
        `    const { wasm } = require(id) as { wasm: string }`,
        `    delete require.cache[id]`,
      ].join("\n"),
    ),
  );
}
