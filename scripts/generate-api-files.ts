/**
 * Writes the files generated from the route declarations:
 *   docs/openapi.json      the OpenAPI document (for client generators, e.g. Java)
 *   docs/API.md            the per-route reference, in Markdown
 *   clients/typescript/src/schema.ts   its TypeScript types, for the TypeScript client
 *   docs/WEBHOOKS.md       its list of event types (the rest of it is written by hand)
 * Run `npm run api:generate` after changing a route; a test fails while they are stale.
 */
import { writeFile } from "node:fs/promises";
import { generatedApiFiles } from "./api-files.js";

for (const [path, content] of Object.entries(await generatedApiFiles())) {
  await writeFile(new URL(`../${path}`, import.meta.url), content);
  console.log(`wrote ${path}`);
}
