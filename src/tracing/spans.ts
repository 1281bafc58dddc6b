import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
} from "@opentelemetry/api";

/**
 * What the rest of the gateway uses to trace: spans around its own work, the active trace's
 * `traceparent`, trace ids for log lines. Only @opentelemetry/api here; the SDK is set up by
 * tracing.ts. Until it is (tracing off), what runs on a request's path here is one check of `tracer`,
 * then the work itself: no span object, no context switch (`activeTraceIds` is not even installed).
 *
 * The active span lives in OpenTelemetry's context (AsyncLocalStorage), the one piece of ambient state
 * below the composition root: a span has to reach code that did not start it.
 */
let tracer: Tracer | undefined;

/** For tracing.ts: the tracer of the provider it registered, or undefined once it is shut down. */
export function useTracer(next: Tracer | undefined): void {
  tracer = next;
}

/** Whether a provider is registered (a cheap check for hot paths). */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** The tracer, while tracing is on. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/**
 * Runs `work` inside a new INTERNAL span (a child of the active one, or a root), active while it runs,
 * ended when it settles and marked as failed with what it threw. With tracing off: `work(undefined)`.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (tracer === undefined) return work(undefined);
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Records `error` on `span` and marks the span as failed. */
export function failSpan(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** The W3C `traceparent` of the active span, to carry the trace past this process's context; undefined when off or none. */
export function activeTraceParent(): string | undefined {
  if (tracer === undefined) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * Starts a CLIENT span continuing the trace `traceParent` names (a root span without one, or with
 * one that does not parse), whatever span is active: work done for a stored row belongs to the
 * trace that stored it. Returns the span and the headers that carry it onward (`traceparent`,
 * with the span's sampled flag), or undefined when tracing is off.
 */
export function startClientSpan(
  name: string,
  traceParent: string | null | undefined,
  attributes: Attributes,
): { span: Span; headers: Record<string, string> } | undefined {
  if (tracer === undefined) return undefined;
  const parent = traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: traceParent }) : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), headers);
  return { span, headers };
}

/** Whether the span's trace is sampled: recorded and exported, so a collector will hold it. */
export function isSampled(span: Span): boolean {
  return (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * A pino mixin: the active span's `traceId` and `spanId` when its trace is sampled; nothing otherwise.
 * A new object every time: pino merges the line's own fields into it.
 */
export function activeTraceIds(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined || !isSampled(span)) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
