import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };

/**
 * A typed client of this API for TypeScript back-ends (the website's), from
 * the OpenAPI document: paths, parameters, bodies and answers are checked by
 * the compiler.
 *
 *   const api = createApiClient("https://api.example.org/api", process.env.API_KEY!);
 *   const { data, error, response } = await api.GET("/player/get-player-by-nick", { params: { query: { nick: "Steve" } } });
 *   // data: the player (status 200); error: { code, message } otherwise
 */
export function createApiClient(baseUrl: string, apiKey: string, options: { fetch?: typeof fetch } = {}) {
  return createClient<paths>({ baseUrl, headers: { "X-API-Key": apiKey }, ...options });
}

export type ApiClient = ReturnType<typeof createApiClient>;
