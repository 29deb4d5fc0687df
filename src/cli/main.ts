// The operator's command line: refuses an unsupported Node.js before anything else loads
// (core/node-support.js), then runs the command (run.ts).
import { requireSupportedNode } from "../core/node-support.js";

requireSupportedNode();
await import("./run.js");
