// Preloaded into a service instance by bench/events.ts (NODE_OPTIONS=--import): its event loop's delay,
// sampled by perf_hooks (every 10 ms, the default resolution: sampling cost stays out of the CPU measured).
// On SIGUSR2 it writes what it saw since the last signal to BENCH_LOOP_DELAY_FILE (ms) and starts again.
import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const histogram = monitorEventLoopDelay();
histogram.enable();
let seq = 0;
process.on("SIGUSR2", () => {
  const ms = (ns) => ns / 1e6;
  const stats = { seq: ++seq, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean) };
  writeFileSync(process.env.BENCH_LOOP_DELAY_FILE, JSON.stringify(stats));
  histogram.reset();
});
