import { readFileSync } from "node:fs";
import path from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { describe, expect, it } from "vitest";

/**
 * docs/openapi.json under Redocly's `recommended` rules, as an API team's CI
 * would lint it: no error and no warning. One rule is off, with its reason:
 * info-license (the project is private and states no license: naming one here
 * would be made up). One is added: every operation's tag is declared (as
 * Spectral's spectral:oas asks).
 */
const DOCUMENT = path.resolve(import.meta.dirname, "../docs/openapi.json");

describe("the OpenAPI document under a linter", () => {
  it("when docs/openapi.json is linted with Redocly's recommended rules, then there is no error and no warning", async () => {
    const config = await createConfig({ extends: ["recommended"], rules: { "info-license": "off", "operation-tag-defined": "warn" } });
    const problems = await lintFromString({ source: readFileSync(DOCUMENT, "utf8"), absoluteRef: DOCUMENT, config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ""}`)).toEqual([]);
  });
});
