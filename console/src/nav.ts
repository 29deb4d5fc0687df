import { auditPage } from "./pages/audit.js";
import { healthPage } from "./pages/health.js";
import { playersPage } from "./pages/players.js";
import { seasonsPage } from "./pages/seasons.js";
import { usersPage } from "./pages/users.js";
import { webhooksPage } from "./pages/webhooks.js";

/** A page of the console: its address (#id), its name in the navigation, and how it fills the main area. */
export interface ConsolePage {
  id: string;
  title: string;
  render: (main: HTMLElement) => Promise<void>;
}

/**
 * The navigation, in order. A page is one entry here and one module under
 * pages/.
 */
export const PAGES: readonly ConsolePage[] = [
  { id: "users", title: "API users", render: usersPage },
  { id: "audit", title: "Audit log", render: auditPage },
  { id: "webhooks", title: "Webhooks", render: webhooksPage },
  { id: "players", title: "Players", render: playersPage },
  { id: "seasons", title: "Seasons", render: seasonsPage },
  { id: "health", title: "Health", render: healthPage },
];
