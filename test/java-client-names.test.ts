import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE } from "../src/core/error-catalogue.js";
import { EVENT_TYPES } from "../src/events/catalogue.js";
import { STATISTICS } from "../src/leaderboards/boards.js";
import { PERIOD_KINDS } from "../src/leaderboards/periods.js";
import { MAX_AROUND, MAX_TOP } from "../src/resources/leaderboard/routes.js";

/**
 * The Java client's enums of the service's names (ErrorName, EventType, Statistic, PeriodKind) hold exactly the service's: a name added
 * here and not there reaches plugins as UNKNOWN, one kept there and dropped here is a constant nothing sends.
 */
const JAVA = "clients/java/src/main/java/net/gamecommunity/api";

/** The enum's constants: its lines `  NAME,` (or `  NAME("wire.name"),`) up to the one that ends with `;`, with the wire name given. */
function declared(file: string): { name: string; wire?: string }[] {
  const lines = readFileSync(`${JAVA}/${file}`, "utf8").split("\n");
  const found: { name: string; wire?: string }[] = [];
  for (const line of lines.slice(lines.findIndex((l) => l.startsWith("public enum")))) {
    const m = /^\s+([A-Z][A-Z0-9_]*)(?:\("([^"]+)"\))?([,;])$/.exec(line);
    if (!m) continue;
    found.push(m[2] ? { name: m[1]!, wire: m[2] } : { name: m[1]! });
    if (m[3] === ";") break;
  }
  return found.filter((c) => c.name !== "UNKNOWN");
}
const constants = (file: string) => declared(file).map((c) => c.name);

/** EventType.wireName(): the name given, or lower case with the last _ a dot. */
const wireName = (c: { name: string; wire?: string }) => c.wire ?? c.name.toLowerCase().replace(/_([a-z0-9]+)$/, ".$1");

describe("the Java client's names", () => {
  it("when ErrorName is read, then its constants are the service's error catalogue, UNKNOWN aside", () => {
    expect(constants("ErrorName.java").sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
  });

  it("when EventType is read, then its constants name the service's event types, UNKNOWN aside", () => {
    expect(declared("EventType.java").map(wireName).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it("when Statistic and PeriodKind are read, then their wire names are the boards' statistics and periods, and Board's limits are the routes'", () => {
    expect(declared("Statistic.java").map((c) => c.wire)).toEqual([...STATISTICS]);
    expect(constants("PeriodKind.java").map((name) => name.toLowerCase())).toEqual([...PERIOD_KINDS, "season"]);
    const board = readFileSync(`${JAVA}/Board.java`, "utf8");
    expect(/static final int MAX_TOP = (\d+);/.exec(board)?.[1]).toBe(String(MAX_TOP));
    expect(/static final int MAX_AROUND = (\d+);/.exec(board)?.[1]).toBe(String(MAX_AROUND));
  });
});
