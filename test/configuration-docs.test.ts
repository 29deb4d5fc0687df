import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENV_VARIABLES } from "../src/config.js";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("the configuration's documentation", () => {
  it("when the service reads a variable, then README's table and .env.example both name it, and name nothing else", () => {
    const section = /\n## Configuration\n([\s\S]*?)\n## /.exec(read("README.md"))![1]!;
    const readmeRows = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    const example = [...read(".env.example").matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(new Set(readmeRows)).toEqual(new Set(ENV_VARIABLES));
    expect(new Set(example)).toEqual(new Set(ENV_VARIABLES));
  });
});
