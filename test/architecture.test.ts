import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../src");
const GENERATED = path.join(SRC, "generated");
const MAX_LINES = 250;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === GENERATED ? [] : sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/**
 * The files of src/ each file imports, type-only imports and re-exports
 * included: a type-only loop still ties the layers together (a change to one
 * side retypes the other), so it counts.
 */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const targets: string[] = [];
  const add = (specifier: ts.Expression | undefined) => {
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) return;
    const resolved = path.resolve(path.dirname(file), specifier.text).replace(/\.js$/, ".ts");
    if (!resolved.startsWith(GENERATED)) targets.push(resolved);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
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
    expect(importCycles(new Map([["a", ["b"]], ["b", []]]))).toEqual([]);
  });
});
