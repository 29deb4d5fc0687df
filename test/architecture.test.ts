import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const SRC = path.join(ROOT, "src");
const GENERATED = path.join(SRC, "generated");
const MAX_LINES = 250;

/** The files of a folder, its subfolders' too, whose name matches (never node_modules, builds, generated code). */
function sourceFiles(dir: string, pattern = /\.ts$/): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === GENERATED || ["node_modules", "dist", "build"].includes(entry.name) ? [] : sourceFiles(full, pattern);
    return pattern.test(entry.name) ? [full] : [];
  });
}

/** A relative specifier's file: `./x.js` is `x.ts` when that exists (TypeScript's ESM convention), else itself. */
function resolveSpecifier(from: string, specifier: string): string {
  const resolved = path.resolve(path.dirname(from), specifier);
  const asTs = resolved.replace(/\.js$/, ".ts");
  return asTs !== resolved && (existsSync(asTs) || resolved.startsWith(SRC)) ? asTs : resolved;
}

/**
 * The files of this repository each file imports, type-only imports and re-exports
 * included: a type-only loop still ties the layers together (a change to one
 * side retypes the other), so it counts.
 */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const targets: string[] = [];
  const add = (specifier: ts.Expression | undefined) => {
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) return;
    const resolved = resolveSpecifier(file, specifier.text);
    if (!resolved.startsWith(GENERATED)) targets.push(resolved);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return targets;
}

/** Every import cycle's files, each cycle once (from its first file in path order). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const walk = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") {
        const cycle = stack.slice(stack.indexOf(next));
        const key = [...cycle].sort().join("|");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (!state.has(next)) walk(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) walk(file);
  return cycles;
}

const relative = (file: string) => path.relative(SRC, file);

describe("the shape of src/", () => {
  const files = sourceFiles(SRC);

  it("when the imports of src/ are followed, then no file comes back to itself", () => {
    const graph = new Map(files.map((file) => [file, importsOf(file)]));
    const cycles = importCycles(graph).map((cycle) => [...cycle, cycle[0]!].map(relative).join(" → "));
    expect(cycles).toEqual([]);
  });

  it("when the files of src/ are counted (generated code aside), then none is over 250 lines", () => {
    const long = files
      .map((file) => ({ file: relative(file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("when a graph has a loop, then the check names its files in order", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(importCycles(graph)).toEqual([["a", "b", "c"]]);
    expect(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });
});

/** The layers docs/DEVELOPMENT.md draws, top row first: each row's folders (`name/`) and root files (`main.ts`). */
export function layersOf(markdown: string): string[][] {
  const block = /<!-- layers:[^>]*-->\s*```text\n([\s\S]*?)```/.exec(markdown);
  if (!block) throw new Error("docs/DEVELOPMENT.md: no <!-- layers --> block");
  return block[1]!
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const names: string[] = [];
      for (const token of line.trim().split(/\s+/)) {
        if (!/^[a-z][a-z0-9-]*(\/|\.ts)$/.test(token)) break;
        names.push(token.replace(/\/$/, ""));
      }
      return names;
    });
}

/** A file's place in src/: its top folder, or its own name for a file at the root (main.ts). */
const placeOf = (file: string) => relative(file).split(path.sep)[0]!;

describe("the layers of src/ (docs/DEVELOPMENT.md)", () => {
  const layers = layersOf(readFileSync(path.join(ROOT, "docs/DEVELOPMENT.md"), "utf8"));
  const row = new Map(layers.flatMap((names, i) => names.map((name) => [name, i] as const)));
  const files = sourceFiles(SRC);
  const places = new Set(files.map(placeOf));
  const imported = new Map<string, Set<string>>();
  for (const file of files) {
    for (const target of importsOf(file)) {
      if (!target.startsWith(SRC + path.sep)) continue;
      const [from, to] = [placeOf(file), placeOf(target)];
      if (from !== to) imported.set(from, (imported.get(from) ?? new Set()).add(to));
    }
  }

  it("when the drawing is read, then it names every folder and root file of src/, each once, and nothing else", () => {
    const drawn = layers.flat();
    expect(drawn.length).toBe(new Set(drawn).size);
    expect([...drawn].sort()).toEqual([...places].sort());
  });

  it("when a file imports from another folder, then that folder is on a lower row (arrows run one way)", () => {
    const upwards = [...imported].flatMap(([from, tos]) => [...tos].filter((to) => row.get(to)! <= row.get(from)!).map((to) => `${from} → ${to}`));
    expect(upwards).toEqual([]);
  });

  it("when a folder's README.md is read, then it says what the folder owns and names exactly the folders it imports", () => {
    const wrong = [...places]
      .filter((place) => !place.endsWith(".ts"))
      .flatMap((folder) => {
        const readme = path.join(SRC, folder, "README.md");
        if (!existsSync(readme)) return [`${folder}: no README.md`];
        const line = /^Imports: (.*)$/m.exec(readFileSync(readme, "utf8"))?.[1];
        const said = line === undefined ? undefined : line === "nothing of src/." ? "" : line.replace(/\.$/, "").split(", ").sort().join(", ");
        const actual = [...(imported.get(folder) ?? [])].sort().join(", ");
        return said === actual ? [] : [`${folder}: README says "${line}", the files import "${actual || "nothing of src/."}"`];
      });
    expect(wrong).toEqual([]);
  });

  it("when a drawing is parsed, then each row gives its folders and root files in order", () => {
    expect(
      layersOf("<!-- layers: x -->\n```text\nmain.ts    the process\nadmin/  api-document/   the console; the document\ncore/   what every layer uses\n```\n"),
    ).toEqual([["main.ts"], ["admin", "api-document"], ["core"]]);
  });
});

/** The hand-written code beside src/, by folder (tests aside: issue 43 left them as they are). */
const BESIDE_SRC: { dir: string; pattern: RegExp; except?: string }[] = [
  { dir: "clients/typescript/src", pattern: /\.ts$/, except: "schema.ts" },
  { dir: "clients/java/src/main", pattern: /\.java$/ },
  { dir: "console/src", pattern: /\.ts$/ },
  { dir: "bench", pattern: /\.(ts|mjs)$/ },
  { dir: "scripts", pattern: /\.(ts|mjs)$/ },
  { dir: "test/helpers", pattern: /\.ts$/ },
];
const MAX_LINES_BESIDE_SRC = 300;

describe("the shape of the code beside src/", () => {
  const files = BESIDE_SRC.flatMap(({ dir, pattern, except }) => sourceFiles(path.join(ROOT, dir), pattern).filter((file) => path.basename(file) !== except));

  it("when the imports of the clients, the console, the bench, the scripts and the test helpers are followed, then no file comes back to itself", () => {
    const scripts = files.filter((file) => !file.endsWith(".java"));
    const graph = new Map(scripts.map((file) => [file, importsOf(file)]));
    const cycles = importCycles(graph).map((cycle) => [...cycle, cycle[0]!].map((file) => path.relative(ROOT, file)).join(" → "));
    expect(cycles).toEqual([]);
  });

  it(`when their files are counted (the generated schema aside), then none is over ${MAX_LINES_BESIDE_SRC} lines`, () => {
    const long = files
      .map((file) => ({ file: path.relative(ROOT, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES_BESIDE_SRC);
    expect(long).toEqual([]);
  });
});
