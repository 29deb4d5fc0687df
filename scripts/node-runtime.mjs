// node scripts/node-runtime.mjs <major>
//
// Prints the path of a Node binary of that major version: the running one when
// it is that version, else the one the npm registry ships as a package
// (node-<platform>-<arch>), installed once under .runtime/node<major> (outside node_modules, which `npm ci` empties).
// Used by .ci/run and the benchmark, so both run the same binary.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const major = process.argv[2];
if (!/^\d+$/.test(major ?? "")) {
  console.error("usage: node scripts/node-runtime.mjs <major version>, e.g. 24");
  process.exit(2);
}

if (process.versions.node.split(".")[0] === major) {
  console.log(process.execPath);
} else {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = path.join(root, ".runtime", `node${major}`);
  const binary = path.join(prefix, "node_modules", pkg, "bin", "node");
  const installedMajor = () => {
    if (!existsSync(binary)) return undefined;
    return execFileSync(binary, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).trim();
  };
  if (installedMajor() !== major) {
    execFileSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `${pkg}@${major}`], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  if (installedMajor() !== major) {
    console.error(`${pkg}@${major} did not install a Node ${major} binary at ${binary}`);
    process.exit(1);
  }
  console.log(binary);
}
