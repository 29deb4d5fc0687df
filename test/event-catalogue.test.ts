import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENTITIES } from "../src/entities/all.js";
import { EVENT_TYPES, isEventType, kindOf } from "../src/events/catalogue.js";
import { EVENT_CALLERS } from "../src/resources/events/visibility.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const sorted = (types: Iterable<string>) => [...new Set(types)].sort();

/** The types docs/WEBHOOKS.md names under `type`: those spelled out, and `<kind>.created` / `<kind>.updated` for each kind it lists. */
function webhooksDocTypes(): string[] {
  const bullet = /^- `type`:([\s\S]*?)^- `timestamp`/m.exec(read("docs/WEBHOOKS.md"))?.[1];
  if (!bullet) throw new Error("docs/WEBHOOKS.md: no `type` bullet");
  const spelled = [...bullet.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]!);
  const kinds = /`<kind>\.created`\s+\/\s+`<kind>\.updated`\s+\(([^)]*)\)/.exec(bullet)?.[1];
  if (!kinds) throw new Error("docs/WEBHOOKS.md: no `<kind>.created` / `<kind>.updated` list");
  const imported = [...kinds.matchAll(/`([a-z_]+)`/g)].flatMap((m) => [`${m[1]}.created`, `${m[1]}.updated`]);
  return sorted([...spelled, ...imported]);
}

describe("the catalogue of event types (src/events/catalogue.ts)", () => {
  it("when docs/WEBHOOKS.md is read, then it names exactly the catalogue's types", () => {
    expect(webhooksDocTypes()).toEqual(sorted(EVENT_TYPES));
  });

  it("when the API document describes a webhook's events, then it lists exactly the catalogue's types, in its order", () => {
    const openapi = JSON.parse(read("docs/openapi.json")) as { paths: Record<string, Record<string, { description?: string }>> };
    const described = Object.values(openapi.paths)
      .flatMap((p) => Object.values(p))
      .map((op) => /`events` chooses the types sent \(any of ([^)]*)\)/.exec(op.description ?? "")?.[1])
      .filter((list) => list !== undefined);
    expect(described).toHaveLength(1);
    expect(described[0]!.split(", ")).toEqual([...EVENT_TYPES]);
  });

  it("when an entity is declared, then its import events are types, and each type has a kind that says who sees it", () => {
    for (const entity of ENTITIES) expect([isEventType(`${entity.kind}.created`), isEventType(`${entity.kind}.updated`)]).toEqual([true, true]);
    expect([...EVENT_CALLERS.keys()]).toEqual([...EVENT_TYPES]);
    expect(EVENT_TYPES.map(kindOf).filter((kind) => kind.includes("."))).toEqual([]);
    expect([isEventType("player.deleted"), isEventType("reward_log.created")]).toEqual([false, true]);
  });
});
