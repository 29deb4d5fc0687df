// @ts-check
// Which Node.js lines the service runs on: the ranges of package.json's "engines" (the one place they
// are written), checked before anything else loads or opens. Plain JavaScript that any Node runs, so
// that `npm start`, `npm test` and the CLI refuse an old Node with one line instead of a crash deep in
// a dependency (Node 20: PGlite hangs, the first request kills the process).
import { readFileSync } from "node:fs";
import process from "node:process";

/** @typedef {{ major: number, minor: number, orLater: boolean }} Line */

/**
 * The ranges of `engines.node`, in the one form package.json uses: `^22.12 || ^24 || >=26`.
 * @param {string} range
 * @returns {Line[]}
 */
export function parseEngines(range) {
  return range.split("||").map((part) => {
    const match = /^\s*(\^|>=)\s*(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(part);
    if (!match) throw new Error(`package.json engines.node: "${part.trim()}" is not of the form ^N[.M] or >=N[.M]`);
    return { major: Number(match[2]), minor: Number(match[3] ?? 0), orLater: match[1] === ">=" };
  });
}

/**
 * @param {string} version as in process.versions.node, e.g. "20.20.2"
 * @param {Line[]} lines
 */
export function isSupported(version, lines) {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return lines.some((line) => (major === line.major && minor >= line.minor) || (line.orLater && major > line.major));
}

/** @param {Line[]} lines */
export function describeLines(lines) {
  const names = lines.map((l) => `${l.major}${l.minor ? ` (${l.major}.${l.minor} or later)` : ""}${l.orLater ? " and later" : ""}`);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : (names[0] ?? "");
}

/**
 * The package this file belongs to (src/core/ and dist/core/ are both two levels down).
 * @returns {{ name: string, engines?: { node?: string } }}
 */
function ownPackage() {
  /** @type {unknown} */
  const pkg = JSON.parse(readFileSync(new globalThis.URL("../../package.json", import.meta.url), "utf8"));
  return /** @type {{ name: string, engines?: { node?: string } }} */ (pkg);
}

/** The supported lines, from package.json's engines. */
export function supportedLines() {
  return parseEngines(String(ownPackage().engines?.node ?? ""));
}

/** Ends the process with one line on stderr (exit 1) when this Node is not one of the supported lines. */
export function requireSupportedNode() {
  const lines = supportedLines();
  const version = process.versions.node;
  if (isSupported(version, lines)) return;
  process.stderr.write(
    `${ownPackage().name} does not run on Node.js ${version} (${process.execPath}): it needs Node.js ${describeLines(lines)}, ` +
      `the maintained lines. Install one (nodejs.org, or \`nvm install 24\`) and run it again.\n`,
  );
  process.exit(1);
}
