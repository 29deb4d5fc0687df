// The floor a request costs here: plain node:http with the reference routes
// (common.mjs), nothing else.
import http from "node:http";
import { allowed, CONTENT_TYPE, callerOf, FORBIDDEN, HOST, INTERNAL, notFound, PORT, routes, stopOnSigterm, UNAUTHORIZED } from "./common.mjs";

const table = new Map(routes.map(([method, path, callers, handler]) => [`${method} ${path}`, [callers, handler]]));

function send(res, [status, body]) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": CONTENT_TYPE, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return raw ? JSON.parse(raw) : {};
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://x");
    const route = table.get(`${req.method} ${url.pathname}`);
    if (!route) return send(res, notFound(req.method, url.pathname));
    const user = await callerOf(req.headers);
    if (!user) return send(res, UNAUTHORIZED);
    if (!allowed(user, route[0])) return send(res, FORBIDDEN);
    const body = req.method === "GET" ? undefined : await readJson(req);
    send(res, await route[1](url.searchParams, body, { actor: user, clientAddress: req.socket.remoteAddress }));
  } catch (error) {
    console.error(error);
    send(res, INTERNAL);
  }
});
server.listen(PORT, HOST, () => console.log(`node:http reference listening on ${server.address().port}`));
stopOnSigterm((done) => server.close(done));
