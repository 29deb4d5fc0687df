/** The allow-list table of decisions.md, copied by hand: the code must match it, not the other way round. */
export const ALLOW_LIST: [method: string, path: string, groups: string][] = [
  ["GET", "/player/get-all-full-players-by-gradeId", "ABD"],
  ["PATCH", "/cosmetic/update-cosmetic", "ABD"],
  ["GET", "/player/get-all-players", "ABCD"],
  ["POST", "/form/create-form", "ABD"],
  ["GET", "/infecte2/get-all-infectes", "ABD"],
  ["GET", "/temporary-item/get-active-items", "ABD"],
  ["POST", "/website/create-reward-log", "ABD"],
  ["POST", "/inscription", "AB"],
  ["GET", "/player/get-player-by-nick", "ABCD"],
  ["PATCH", "/freebuild/update-world", "AB"],
  ["GET", "/parkour/get-all-maps", "ABC"],
  ["GET", "/cosmetic/get-cosmetic", "ABCD"],
  // The event stream (issue 25): every group, each type then allowed by its own route's groups.
  ["GET", "/events", "ABCD"],
  // The admin routes behind the console (issue 18): groups A and B, like POST /inscription.
  ["GET", "/admin/session", "AB"],
  ["GET", "/admin/users", "AB"],
  ["POST", "/admin/users/rotate-key", "AB"],
  ["POST", "/admin/users/revoke", "AB"],
  ["PATCH", "/admin/users/allowed-addresses", "AB"],
  ["GET", "/admin/audit", "AB"],
  ["GET", "/admin/webhooks", "AB"],
  ["POST", "/admin/webhooks/add", "AB"],
  ["POST", "/admin/webhooks/remove", "AB"],
  ["GET", "/admin/webhooks/deliveries", "AB"],
  ["POST", "/admin/webhooks/redeliver", "AB"],
  // A player's personal data (issue 51): the admin routes' callers.
  ["POST", "/admin/players/export", "AB"],
  ["POST", "/admin/players/erase", "AB"],
  ["GET", "/admin/players/erasures", "AB"],
  // Leaderboards (issue 52): those who read the statistics (get-all-infectes); seasons, the admin routes' callers.
  ["GET", "/infecte2/get-leaderboard", "ABD"],
  ["GET", "/infecte2/get-leaderboard-rank", "ABD"],
  ["GET", "/infecte2/get-leaderboard-around", "ABD"],
  ["POST", "/admin/seasons/start", "AB"],
  ["POST", "/admin/seasons/end", "AB"],
  ["GET", "/admin/seasons", "AB"],
];

/** The spec's version labels (Versioning, rule 2). */
export const VERSIONS: Record<string, string> = {
  "/player/get-all-full-players-by-gradeId": "2.0.0",
  "/player/get-all-players": "2.0.3",
  "/form/create-form": "2.0.0",
  "/temporary-item/get-active-items": "2.0.0",
  "/website/create-reward-log": "2.0.0",
  "/inscription": "2.0.0",
  "/cosmetic/get-cosmetic": "2.0.0",
};
