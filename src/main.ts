// The service's process: refuses an unsupported Node.js before anything else loads (core/node-support.js),
// then runs (service/run.ts).
import { requireSupportedNode } from "./core/node-support.js";

requireSupportedNode();
await import("./service/run.js");
