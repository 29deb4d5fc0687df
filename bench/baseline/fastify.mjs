// What a user might pick instead of Express: Fastify 5 with the reference
// routes (common.mjs), an onRequest hook checking the key from the in-memory
// cache, the routes, nothing else.

import { URLSearchParams } from "node:url";
import Fastify from "fastify";
import { allowed, CONTENT_TYPE, callerOf, FORBIDDEN, HOST, INTERNAL, notFound, PORT, routes, stopOnSigterm, UNAUTHORIZED } from "./common.mjs";

const send = (reply, [status, body]) => reply.code(status).type(CONTENT_TYPE).send(JSON.stringify(body));

const app = Fastify({ logger: false });
app.decorateRequest("user", "");
app.addHook("onRequest", async (req, reply) => {
  const user = await callerOf(req.headers);
  if (!user) return send(reply, UNAUTHORIZED);
  req.user = user;
});
for (const [method, path, callers, handler] of routes) {
  app.route({
    method,
    url: path,
    handler: async (req, reply) => {
      if (!allowed(req.user, callers)) return send(reply, FORBIDDEN);
      const query = new URLSearchParams(req.url.slice(req.url.indexOf("?") + 1 || req.url.length));
      return send(reply, await handler(query, req.body, { actor: req.user, clientAddress: req.socket.remoteAddress }));
    },
  });
}
app.setNotFoundHandler((req, reply) => send(reply, notFound(req.method, req.url.split("?")[0])));
app.setErrorHandler((error, _req, reply) => {
  console.error(error);
  send(reply, INTERNAL);
});

await app.listen({ port: PORT, host: HOST });
console.log(`Fastify reference listening on ${app.server.address().port}`);
stopOnSigterm((done) => app.close().then(done));
