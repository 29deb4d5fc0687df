import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { maskKeys } from "./api-keys.js";

/**
 * Traces (docs/OPERATIONS.md, "Traces"), through the OpenTelemetry API alone: service/tracing-setup.ts
 * loads the SDK only when an exporter is configured; until then `tracing.on` is false and every helper
 * returns at once, without a span, context or allocation. A span never holds a key, a secret, a query's
 * text or values, a request's query string or body; a 5xx's message (keys masked) is its one free text.
 */
export const tracing = {
  /** Set once, at start, before the first request. */
  on: false,
  /**
   * Spans lost since start (tracing_spans_dropped_total): no room in the queue (OTEL_BSP_MAX_QUEUE_SIZE), or in an
   * export that failed (the collector unreachable, refusing, or too slow).
   */
  dropped: { queue_full: 0, export_failed: 0 },
};

const tracer = () => trace.getTracer("game-community-api");

/** Context carriers: a request's headers, a stored `traceparent`. */
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === "string" ? value : Array.isArray(value) ? (value[0] as string | undefined) : undefined;
  },
};

/**
 * A request's server span, continuing the caller's trace when it sent a valid `traceparent` (a malformed
 * one starts a new trace). Run the request's work in the returned context. Undefined when tracing is off.
 */
export function startRequestSpan(method: string, headers: Record<string, unknown>): { span: Span; context: Context } | undefined {
  if (!tracing.on) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { "http.request.method": method } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a request's span with its route template (`GET /api/cosmetic/get-cosmetic`) and status; a 5xx is an error. */
export function endRequestSpan(span: Span, method: string, route: string | undefined, status: number): void {
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute("http.route", route);
  }
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Adds attributes to the active span (the request's, or the one `inSpan` made), if any. */
export function annotate(attributes: Attributes): void {
  if (!tracing.on) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Records a failure on the active span: its exception event, and the span's status. */
export function recordFailure(error: unknown): void {
  if (!tracing.on) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  const shown = exceptionOf(error);
  span.recordException(shown);
  span.setStatus({ code: SpanStatusCode.ERROR, message: shown.message });
}

/** An exception as a span records it: its type, message (keys masked, as in the log) and stack. */
function exceptionOf(error: unknown): { name: string; message: string; stack?: string } {
  if (!(error instanceof Error)) return { name: "Error", message: maskKeys(String(error)) };
  return { name: error.name, message: maskKeys(error.message), ...(error.stack ? { stack: maskKeys(error.stack) } : {}) };
}

/**
 * Runs `work` in a child span of the active one (a root span with `parent`'s context if given): ended when
 * `work` settles, a throw recorded on it. Without tracing, `work` alone.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  options: { kind?: SpanKind; parent?: Context; links?: readonly (string | null)[] } = {},
): Promise<T> {
  if (!tracing.on) return work();
  const parent = options.parent ?? context.active();
  // A trace the sampler left out: its children would be left out too (parent-based), so none is made at all.
  // (In a parent given, still: what it propagates, a webhook's traceparent, says so.)
  const within = trace.getSpanContext(parent);
  if (within && (within.traceFlags & TraceFlags.SAMPLED) === 0) return options.parent ? context.with(parent, work) : work();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes, links: linksTo(options.links) }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work();
    } catch (error) {
      span.recordException(exceptionOf(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Links to the spans stored `traceparent`s name (an event's write), the valid ones, at most 128 (the SDK's limit). */
function linksTo(traceparents: readonly (string | null)[] | undefined): Link[] | undefined {
  if (!traceparents) return undefined;
  const links: Link[] = [];
  for (const traceparent of traceparents) {
    const linked = traceparent ? trace.getSpanContext(contextOf(traceparent)) : undefined;
    if (linked && links.length < 128) links.push({ context: linked });
  }
  return links;
}

/** The active span's W3C `traceparent` (what an event stores, what a webhook sends), or null. */
export function currentTraceparent(): string | null {
  if (!tracing.on) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored `traceparent` names (a span started in it joins that trace), or the root context. */
export function contextOf(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }, headerGetter) : ROOT_CONTEXT;
}

export { SpanKind };
