import type { Attributes, DiagLogger, MeterProvider } from "@opentelemetry/api";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { throttledWarning } from "../core/throttled-warning.js";
import { tracing } from "../core/tracing.js";
import { tracingWanted } from "../core/tracing-config.js";

/** Tracing running in this process: stop it to export what is queued (bounded by OTEL_BSP_EXPORT_TIMEOUT). */
export interface Tracing {
  shutdown(): Promise<void>;
}

/** How long a failing exporter's warning stays quiet before it is said again (with the count meanwhile). */
const WARN_EVERY_MS = 60_000;
/** The longest a stop waits for the last spans' export. */
const SHUTDOWN_EXPORT_MS = 2_000;

/**
 * Starts tracing when an OTLP endpoint is configured (core/tracing-config.ts), else does nothing and loads
 * nothing: the SDK's modules are imported here only then. Spans go to a bounded queue (OTEL_BSP_MAX_QUEUE_SIZE)
 * exported in batches by the official OTLP/HTTP exporter; a collector that is down, refuses or is slow never
 * slows a request: what the queue cannot hold is dropped and counted (tracing_spans_dropped_total), and the
 * exporter's failures are one warning a minute. Before the app is built: the routes and the database read
 * `tracing.on` once.
 */
export async function startTracing(config: Config, logger: Logger): Promise<Tracing | undefined> {
  if (!tracingWanted(config)) return undefined;
  const [api, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, sdk, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
  ]);
  const warn = throttledWarning(
    logger,
    "tracing: spans could not be exported (the collector is unreachable, refusing or slow); requests are not affected",
    WARN_EVERY_MS,
  );
  api.diag.setLogger(diagnostics(warn), api.DiagLogLevel.WARN);
  // The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION itself.
  const exporter = new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  const ratio = config.otelTracesSamplerArg;
  const samplers = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => new sdk.TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
  };
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.otelServiceName }),
    sampler: samplers[config.otelTracesSampler](),
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter,
        maxQueueSize: config.otelBspMaxQueueSize,
        maxExportBatchSize: Math.min(config.otelBspMaxExportBatchSize, config.otelBspMaxQueueSize),
        scheduledDelayMillis: config.otelBspScheduleDelay,
        exportTimeoutMillis: config.otelBspExportTimeout,
        selfObsMeterProvider: countingDrops(api.createNoopMeter),
      }),
    ],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // traceparent and tracestate, W3C Trace Context: the standard the clients and receivers speak.
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  tracing.on = true;
  logger.info({ serviceName: config.otelServiceName, sampler: config.otelTracesSampler, ratio }, "tracing on: spans exported over OTLP/HTTP");
  return {
    async shutdown() {
      // Bounded: a collector that does not answer must not hold the process past its stop.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_EXPORT_MS)));
      await Promise.race([provider.shutdown().catch((error: unknown) => logger.warn({ err: error }, "tracing: the last spans could not be exported")), late]);
      clearTimeout(timer);
    },
  };
}

/** The SDK's own warnings (an export failed, spans dropped): to the service's log, at most once a minute. */
function diagnostics(warn: (err: unknown) => void): DiagLogger {
  // The SDK says an exception as its JSON (core's loggingErrorHandler): its message is enough, without a stack.
  const text = (said: unknown) => {
    if (said instanceof Error) return said.message;
    try {
      return String((JSON.parse(String(said)) as { message?: unknown }).message ?? said);
    } catch {
      return String(said);
    }
  };
  const say = (message: string, ...args: unknown[]) => warn({ message: [message, ...args].map(text).join(" ") });
  const quiet = () => undefined;
  return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
}

/**
 * The batch processor's self-observability counter (otel.sdk.processor.span.processed), read for the spans it
 * lost: `queue_full`, or an export's error. The rest of its metrics go nowhere (Prometheus is ours).
 */
function countingDrops(noopMeter: () => ReturnType<MeterProvider["getMeter"]>): MeterProvider {
  const meter = noopMeter();
  const counting: ReturnType<MeterProvider["getMeter"]> = Object.assign(Object.create(meter) as typeof meter, {
    createCounter: (name: string, ...rest: unknown[]) => {
      if (name !== "otel.sdk.processor.span.processed") return meter.createCounter(name, ...(rest as []));
      return {
        add(count: number, attributes?: Attributes) {
          const reason = attributes?.["error.type"];
          if (reason === undefined) return;
          const key = reason === "queue_full" ? "queue_full" : "export_failed";
          tracing.dropped[key] += count;
        },
      };
    },
  });
  return { getMeter: () => counting };
}
