import { context, diag, DiagLogLevel, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Logger } from "pino";
import type { TracingSettings } from "../config";
import { tracingOn, useTracer } from "./spans";

/** The instrumentation scope every span of the gateway is reported under. */
export const TRACER_NAME = "cargo-gateway";
/** How long a stop waits for the last spans to reach the collector: one that does not answer must not hold the stop. */
const FLUSH_AT_STOP_MS = 2_000;

export interface Tracing {
  /** Sends the spans still batched (for at most FLUSH_AT_STOP_MS), then unregisters everything. */
  stop(): Promise<void>;
}

/**
 * Registers an OpenTelemetry tracer provider for the process: spans batched and POSTed over OTLP/HTTP
 * to `settings.endpoint`, W3C trace context propagation, AsyncLocalStorage for the active span; the
 * SDK's own warnings and errors (a collector that refuses or does not answer) are logged.
 * `exporter` (tests): spans go to it one by one as they end (a simple processor) instead; everything
 * else is the same. One provider per process: a second start while one runs is refused.
 */
export function startTracing(settings: TracingSettings, log: Logger, exporter?: SpanExporter): Tracing {
  if (tracingOn()) throw new Error("tracing is already started in this process");
  const sdkLog = log.child({ component: "opentelemetry" });
  // Outside any span: an export runs in the context of the span whose end sent it, and its failure
  // is no part of that request's trace.
  const report = (level: "error" | "warn", message: string, args: unknown[]) =>
    context.with(ROOT_CONTEXT, () => sdkLog[level]({ details: args.map(String) }, message));
  diag.setLogger(
    {
      error: (message, ...args) => report("error", message, args),
      warn: (message, ...args) => report("warn", message, args),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const processor: SpanProcessor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint }));
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName })),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [processor],
  });
  provider.register(); // the W3C trace-context (and baggage) propagator, AsyncLocalStorage context
  useTracer(provider.getTracer(TRACER_NAME));
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        useTracer(undefined);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          provider.shutdown().catch(() => {}),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_AT_STOP_MS).unref())),
        ]);
        clearTimeout(timer);
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      })()),
  };
}
