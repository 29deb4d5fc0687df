import { createRequire } from "node:module";
import path from "node:path";
import express, { type Router } from "express";
import helmet from "helmet";
import type { oas31 } from "zod-openapi";
import { apiServer } from "./openapi.js";

// The folder only: importing swagger-ui-dist would load its 1.5 MB browser bundle into the server.
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
/** The files of swagger-ui-dist the page loads; nothing else of the package is served (not its package.json). */
const ASSETS = ["swagger-ui.css", "swagger-ui-bundle.js"] as const;

/**
 * GET /api/openapi.json and the interactive documentation at GET /api/docs,
 * without a key. The page is Swagger UI served from our own dependency: no
 * CDN, since many communities' back-ends have no outside access either.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Game community API</title>
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

// A script of its own rather than inline: the Content-Security-Policy allows same-origin scripts only.
const INIT = `window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
`;

/**
 * The docs page's Content-Security-Policy, every directive named (none of helmet's defaults, whose
 * font-src and style-src admit any HTTPS origin): scripts, styles, fonts and requests from the page's
 * own origin only; images also as data: URLs (swagger-ui.css draws its icons so); nothing inline
 * (Swagger UI sets its highlighted examples' colours through the DOM, which a policy does not govern).
 * No upgrade-insecure-requests: served over plain HTTP from another host, the page would fetch its own
 * scripts over HTTPS and stay blank. TLS, where used, is the reverse proxy's business.
 */
export const DOCS_POLICY = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", "data:"],
  objectSrc: ["'none'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'"],
};

/** A Host (or X-Forwarded-Host) fit to be written into the document: a name or an address, and a port. */
const SANE_HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The document's `servers` is the service's public URL (PUBLIC_URL) when configured, else the origin the
 * request came to: the scheme and host the client used, or those its proxy forwarded when TRUST_PROXY
 * trusts it. A host unfit for a URL leaves the document's template (api-document/openapi.ts, apiServer).
 */
export function docsRouter(document: oas31.OpenAPIObject, publicUrl: string | undefined): Router {
  const router = express.Router();
  const template = JSON.stringify(document);
  const served = (origin: string) => JSON.stringify({ ...document, servers: [apiServer(origin)] });
  const fixed = publicUrl === undefined ? undefined : served(publicUrl);
  // The HTML page gets helmet's headers, with a policy that lets Swagger UI run from our own files only.
  router.use("/docs", helmet({ contentSecurityPolicy: { useDefaults: false, directives: DOCS_POLICY } }));
  router.get("/openapi.json", (req, res) => {
    let json = fixed;
    if (json === undefined) {
      res.setHeader("Vary", "Host, X-Forwarded-Host, X-Forwarded-Proto");
      const host = req.host;
      // No Host at all (HTTP/1.0) leaves req.host undefined, which a regular expression would read as "undefined".
      const usable = typeof host === "string" && SANE_HOST.test(host) && (req.protocol === "http" || req.protocol === "https");
      json = usable ? served(`${req.protocol}://${host}`) : template;
    }
    res.type("application/json; charset=utf-8").send(json);
  });
  // The page names its files relative to itself, so that it works behind a path prefix (PUBLIC_URL):
  // from /api/docs/ they would resolve under /api/docs/docs/, so that address is sent to /api/docs.
  router.get("/docs", (req, res) => {
    if (req.originalUrl.split("?")[0]!.endsWith("/")) {
      res.redirect(301, "../docs");
      return;
    }
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  for (const file of ASSETS) {
    router.get(`/docs/assets/${file}`, (_req, res) => {
      res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: "1h" });
    });
  }
  return router;
}
