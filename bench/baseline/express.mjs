// Express 5's own ceiling: the reference routes (common.mjs) in a bare Express
// app, an auth middleware checking the key from the in-memory cache, the
// routes, nothing else (ETag off as in the service).

import { URLSearchParams } from "node:url";
import express from "express";
import { allowed, CONTENT_TYPE, callerOf, FORBIDDEN, HOST, INTERNAL, notFound, PORT, routes, stopOnSigterm, UNAUTHORIZED } from "./common.mjs";

const send = (res, [status, body]) => res.status(status).type(CONTENT_TYPE).send(JSON.stringify(body));

const app = express();
app.set("etag", false);
app.set("x-powered-by", false);
app.use(async (req, res, next) => {
  const user = await callerOf(req.headers);
  if (!user) return send(res, UNAUTHORIZED);
  res.locals.user = user;
  next();
});
app.use(express.json());
for (const [method, path, callers, handler] of routes) {
  app[method.toLowerCase()](path, async (req, res) => {
    const user = res.locals.user;
    if (!allowed(user, callers)) return send(res, FORBIDDEN);
    const query = new URLSearchParams(req.url.slice(req.url.indexOf("?") + 1 || req.url.length));
    send(res, await handler(query, req.body, { actor: user, clientAddress: req.socket.remoteAddress }));
  });
}
app.use((req, res) => send(res, notFound(req.method, req.path)));
app.use((error, _req, res, _next) => {
  console.error(error);
  send(res, INTERNAL);
});

const server = app.listen(PORT, HOST, () => console.log(`Express reference listening on ${server.address().port}`));
stopOnSigterm((done) => server.close(done));
