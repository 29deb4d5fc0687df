import { z } from "zod";
import { integer, optionalUrl } from "./config-rules.js";

/**
 * The OpenTelemetry settings this service reads, by their standard names (the SDK's environment
 * variables): part of config.ts's envSchema, so that each is checked at start and documented. The
 * exporter itself also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION and their _TRACES_
 * forms (docs/OPERATIONS.md, "Traces").
 */
export const TRACING_ENV = {
  /** The collector's OTLP/HTTP address (/v1/traces is added); unset, with the next unset too: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl(/^https?:\/\//, "expected an http:// or https:// URL"),
  /** The traces' own address, whole (with its /v1/traces); takes precedence over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl(/^https?:\/\//, "expected an http:// or https:// URL"),
  /** `none` turns tracing off whatever the endpoint; `otlp` (the default) exports to it. */
  OTEL_TRACES_EXPORTER: z.enum(["otlp", "none"], { error: "expected otlp or none" }).default("otlp"),
  /** `true` turns tracing off. */
  OTEL_SDK_DISABLED: z
    .enum(["true", "false"], { error: "expected true or false" })
    .default("false")
    .transform((raw) => raw === "true"),
  /** The service.name of every span. */
  OTEL_SERVICE_NAME: z.string().trim().min(1).default("game-community-api"),
  /** Which traces are kept: the OpenTelemetry samplers' names. */
  OTEL_TRACES_SAMPLER: z
    .enum(["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"], {
      error: "expected always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio",
    })
    .default("parentbased_always_on"),
  /** The ratio of the traceidratio samplers, 0 to 1 (0.1: one trace in ten). */
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .default("1")
    .refine((raw) => /^(0(\.\d+)?|1(\.0+)?)$/.test(raw.trim()), { message: "expected a ratio between 0 and 1, such as 0.1" })
    .transform((raw) => Number(raw.trim())),
  /** Spans waiting for export at most; beyond, new ones are dropped (and counted: tracing_spans_dropped_total). */
  OTEL_BSP_MAX_QUEUE_SIZE: integer(1, 1_000_000, 2048),
  /** Milliseconds between two exports. */
  OTEL_BSP_SCHEDULE_DELAY: integer(1, 3_600_000, 5000),
  /** Spans per export at most. */
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: integer(1, 1_000_000, 512),
  /** Milliseconds an export may take; then it is abandoned (its spans dropped). */
  OTEL_BSP_EXPORT_TIMEOUT: integer(1, 3_600_000, 30_000),
};

/** Whether tracing is on: an endpoint configured, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none. */
export function tracingWanted(config: {
  otelExporterOtlpEndpoint: string | undefined;
  otelExporterOtlpTracesEndpoint: string | undefined;
  otelTracesExporter: "otlp" | "none";
  otelSdkDisabled: boolean;
}): boolean {
  if (config.otelSdkDisabled || config.otelTracesExporter === "none") return false;
  return config.otelExporterOtlpEndpoint !== undefined || config.otelExporterOtlpTracesEndpoint !== undefined;
}
