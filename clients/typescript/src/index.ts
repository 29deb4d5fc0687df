// The package's public face: what `game-community-api-client` exports, and nothing else. Each part lives in a
// module of its own, built on errors.ts (ApiError, orThrow) and client.ts (the ApiClient and its transport);
// none of them imports this file.

export { type ApiClient, type ApiClientOptions, createApiClient } from "./client.js";
export { ApiError, orThrow } from "./errors.js";
export { type LiveEvent, type SubscribeOptions, subscribe } from "./events.js";
export { type ListPath, type ListQuery, type ListRow, ListSync, type Page, type SyncResult, walkPages } from "./lists.js";
export { EtagPoller, type PollablePath, type PollResult } from "./poll.js";
export type { components, paths } from "./schema.js";
