import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every relative link of the repository's Markdown files leads somewhere: the
 * file exists, and its #anchor is a heading there (as GitHub makes anchors).
 */
const root = path.resolve(import.meta.dirname, "..");
const SKIPPED = new Set(["node_modules", "dist", ".git", "build", "target"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchors of a file's headings (lower case, punctuation dropped, spaces as hyphens, -1, -2… for repeats). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, "");
  for (const [, title] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = title!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

describe("links between the Markdown files", () => {
  it("when the heading rule is applied, then it gives GitHub's anchors", () => {
    expect([...anchorsOf("# Start\n## Large lists: streaming, pages and sync-by-change\n## `DATA_DIR` (the folder)\n## Start\n")]).toEqual([
      "start",
      "large-lists-streaming-pages-and-sync-by-change",
      "data_dir-the-folder",
      "start-1",
    ]);
  });

  const files = markdownFiles(root);
  it.each(files.map((file) => [path.relative(root, file), file]))(
    "when %s links to a file or a heading of this repository, then it is there",
    (_name, file) => {
      const broken: string[] = [];
      for (const [, target] of prose(readFileSync(file, "utf8")).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:…
        const [pathPart, anchor] = target!.split("#") as [string, string | undefined];
        const resolved = pathPart ? path.resolve(path.dirname(file), decodeURIComponent(pathPart)) : file;
        if (!existsSync(resolved)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && statSync(resolved).isFile()) {
          if (!anchorsOf(readFileSync(resolved, "utf8")).has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${target}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
    },
  );
});

/** The docs a person reads (API.md is generated: its cells are the routes' declarations and the error catalogue). */
const READ = ["README.md", "docs/CALLING.md", "docs/OPERATIONS.md", "docs/SECURITY.md", "docs/WEBHOOKS.md", "docs/API.md"];
const MAX_CELL_WORDS = 60;

describe("the docs' tables", () => {
  it.each(READ)(`when %s is read, then no table cell runs over ${MAX_CELL_WORDS} words (a longer explanation is a section the cell links to)`, (file) => {
    const long = readFileSync(path.join(root, file), "utf8")
      .split("\n")
      .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
      .filter(({ line }) => line.startsWith("|"))
      .flatMap(({ line, at }) =>
        line
          .slice(1, -1)
          .split(" | ")
          .map((cell) => ({ at, words: cell.trim().split(/\s+/).length })),
      )
      .filter(({ words }) => words > MAX_CELL_WORDS);
    expect(long).toEqual([]);
  });
});
