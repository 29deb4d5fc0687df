// The package's public face: what `game-community-api-client` exports, and nothing else. Each part lives in a
// module of its own, built on errors.ts (ApiError, orThrow) and client.ts (the ApiClient and its transport);
// none of them imports this file.
export type { components, paths } from "./schema.js";
export { createApiClient, type ApiClient, type ApiClientOptions } from "./client.js";
export { ApiError, orThrow } from "./errors.js";
export { EtagPoller, type PollablePath, type PollResult } from "./poll.js";
export { ListSync, walkPages, type ListPath, type ListQuery, type ListRow, type Page, type SyncResult } from "./lists.js";
export { subscribe, type LiveEvent, type SubscribeOptions } from "./events.js";
