import { context, propagation, trace } from "@opentelemetry/api";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";

// Turns tracing on (`OTEL_TRACING=1`): a NodeTracerProvider exporting over OTLP/HTTP, configured by the
// standard OTEL_EXPORTER_OTLP_* variables that the exporter reads itself, and OTEL_SERVICE_NAME. Off (the
// default), nothing is registered and the API stays a no-op. Tests pass their own (in-memory) exporter.

export interface Tracing {
  /** Flushes pending spans and unregisters the provider. */
  shutdown(): Promise<void>;
}

export function startTracing(opts: { enabled: boolean; exporter?: SpanExporter }): Tracing | undefined {
  if (!opts.enabled) return undefined;
  const exporter = opts.exporter ?? new OTLPTraceExporter();
  const provider = new NodeTracerProvider({
    // service.name: OTEL_SERVICE_NAME when set, else `svc` (the SDK's default would be `unknown_service:node`).
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME || "svc" })),
    // A test's exporter wants spans at once; the network exporter batches.
    spanProcessors: [opts.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  provider.register();
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
