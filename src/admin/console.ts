import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Response, type Router } from "express";
import { errors } from "../core/errors.js";

/**
 * The admin console at /admin: a page and its two files, bundled at build
 * time into dist/console (scripts/build-console.mjs) and served from there,
 * no key needed to load them (the page asks for one, and sends it to
 * /api/admin/… only). From src/admin and from dist/admin alike, two levels up
 * is the project's root.
 */
export const CONSOLE_DIR = path.resolve(import.meta.dirname, "..", "..", "dist", "console");

/** Only the page's own files, no inline script or style, no framing, no other origin. */
export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const FILES = {
  "console.js": "application/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
  // Named by the page: without it, browsers ask for /favicon.ico on every load and get a 404.
  "favicon.svg": "image/svg+xml",
} as const;

export function consoleRouter(dir = CONSOLE_DIR): Router {
  const router = express.Router({ strict: true });
  const send = (res: Response, file: string, type: string) => {
    if (!existsSync(path.join(dir, file))) {
      throw errors.consoleNotBuilt();
    }
    res.setHeader("Content-Security-Policy", CONSOLE_POLICY);
    // The page is small and changes with each release: always revalidated, never stale after a deploy.
    res.setHeader("Cache-Control", "no-cache");
    res.type(type).sendFile(file, { root: dir, cacheControl: false, dotfiles: "deny" });
  };
  // The page names its files relative to itself (admin/assets/…), so that it works behind a path prefix.
  router.get("/admin", (_req, res) => send(res, "index.html", "text/html; charset=utf-8"));
  router.get("/admin/", (_req, res) => res.redirect(301, "../admin"));
  for (const [file, type] of Object.entries(FILES)) router.get(`/admin/assets/${file}`, (_req, res) => send(res, file, type));
  return router;
}
