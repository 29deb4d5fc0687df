import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { loadSample } from "../src/transfer/sample.js";
import { createTestDatabase } from "./helpers/database.js";

/**
 * The command-line blocks of OPERATIONS.md marked `<!-- run by
 * test/doc-commands.test.ts -->`: each line, an `npm run --silent cli -- …`
 * command (its `KEY=$(…)` capture included), is run in order by the CLI's own
 * code on a fresh database loaded with the sample community, and must succeed.
 * One database per block: each block is read on its own.
 */
const FILE = "docs/OPERATIONS.md";
const MARKED = /<!-- run by test\/doc-commands\.test\.ts[^>]*-->\n```sh\n([\s\S]*?)^```$/gm;
const COMMAND = /^(?:[A-Z_]+=\$\()?npm run --silent cli -- (.+?)\)?\s*(?:#.*)?$/;

const markdown = readFileSync(FILE, "utf8");
const blocks = [...markdown.matchAll(MARKED)].map((m) => ({
  line: markdown.slice(0, m.index).split("\n").length + 2,
  commands: m[1]!.split("\n").filter((line) => line.trim() !== ""),
}));

describe(`the command-line examples of ${FILE}`, () => {
  it("when read, then some blocks are marked to be run here", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
  });

  it.each(blocks.map((block) => [`${FILE}:${block.line}`, block.commands] as const))(
    "when the block at %s is run line by line, then every command succeeds",
    async (_at, commands) => {
      const database = await createTestDatabase();
      try {
        await loadSample(database.db.prisma, new Date());
        const config = loadConfig({ NODE_ENV: "test" });
        for (const line of commands) {
          const command = COMMAND.exec(line);
          expect(command, `not a CLI command: ${line}`).not.toBeNull();
          let stderr = "";
          const code = await runCli(
            command![1]!.split(/\s+/),
            { config, db: database.db, logger: createLogger("silent") },
            {
              stdout: () => undefined,
              stderr: (text) => (stderr += text),
            },
          );
          expect(code, `${line}\n${stderr}`).toBe(0);
        }
      } finally {
        await database.drop();
      }
    },
  );
});
