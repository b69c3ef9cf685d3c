import { context, ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer, type TracerProvider } from "@opentelemetry/api";

// OpenTelemetry hooks. Spans are made through @opentelemetry/api only: with no tracer provider registered
// (the default) every call is the API's no-op, and a no-op span (invalid context) skips the context
// switch too, so the hooks cost well under a microsecond. `OTEL_TRACING=1` registers a provider
// (tracing-setup.ts); operators may instead register their own with `node --import`.

const TRACER = "svc";

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

/** The tracer, made once per global provider (the API's proxy tracer picks up a provider registered later). */
function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(TRACER) };
  return cached.tracer;
}

export { SpanKind };

/** The API's no-op provider: what the global proxy delegates to while nothing is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider is registered (spans would record); false for the API's no-op default. */
export function tracingEnabled(): boolean {
  const p = trace.getTracerProvider();
  return (p instanceof ProxyTracerProvider ? p.getDelegate() : p) !== NOOP_PROVIDER;
}

/** Runs `fn` inside a span named `name`; the span records an exception and ends when `fn` settles. */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  const span = tracer().startSpan(name, { kind, attributes });
  if (!trace.isSpanContextValid(span.spanContext())) return fn(span); // no provider: nothing to record or propagate
  return context.with(trace.setSpan(context.active(), span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Starts a span for an incoming request that ends elsewhere (when the response finishes). */
export function startServerSpan(name: string, attributes: Attributes): { span: Span; run: <T>(fn: () => T) => T } {
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes });
  if (!trace.isSpanContextValid(span.spanContext())) return { span, run: (fn) => fn() };
  const ctx = trace.setSpan(context.active(), span);
  return { span, run: (fn) => context.with(ctx, fn) };
}
