import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, createRouterTransport, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";
import { CatalogService, GetSkillGuideRequestSchema, ListServicesRequestSchema } from "../../../gen/svc/catalog/v1/catalog_service_pb.js";
import { PaymentRequiredSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { createDirectTransport } from "../../../src/rest/direct-transport.js";
import { errorReason, rpcError } from "../../../src/platform/rpc/errors.js";

// The REST shim's direct transport must answer exactly like Connect's router transport (which encodes
// to binary and back): same messages, response headers, interceptors, error codes, reasons, details
// and metadata. Each case runs through both and compares.

const kSeen = createContextKey<string>("", { description: "set by the test interceptor" });

function setup() {
  const seen: string[] = [];
  const interceptor: Interceptor = (next) => async (req) => {
    req.contextValues.set(kSeen, req.header.get("x-who") ?? "");
    seen.push(`${req.method.name}:${req.header.get("x-who")}`);
    const res = await next(req);
    res.header.set("x-intercepted", "yes");
    return res;
  };
  const routes = (router: ConnectRouter) => {
    router.service(CatalogService, {
      getSkillGuide(_req, ctx) {
        ctx.responseHeader.set("cache-control", "no-store");
        const who = ctx.values.get(kSeen);
        if (who === "boom") throw new Error("not a ConnectError");
        if (who === "refuse") {
          ctx.responseHeader.set("payment-response", "receipt");
          throw rpcError(Code.FailedPrecondition, "payment_required", "Payment required", {
            headers: { "payment-required": "abc" },
            details: [{ desc: PaymentRequiredSchema, value: { x402Version: 1, error: "Payment required" } }],
          });
        }
        return { markdown: `hello ${who}` };
      },
    });
  };
  const interceptors = [interceptor];
  const router = createRouterTransport(routes, { router: { interceptors } });
  return { seen, router, direct: createDirectTransport(routes, interceptors, router) };
}

const guide = (t: Transport, who: string) => t.unary(CatalogService.method.getSkillGuide, undefined, undefined, { "x-who": who }, create(GetSkillGuideRequestSchema), undefined);

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

describe("rest direct transport", () => {
  it("returns the same message and response headers, through the same interceptors", async () => {
    const { seen, router, direct } = setup();
    const [a, b] = [await guide(router, "ann"), await guide(direct, "ann")];
    expect(b.message).to.deep.include({ markdown: "hello ann" });
    expect((b.message as { markdown: string }).markdown).to.equal((a.message as { markdown: string }).markdown);
    for (const h of ["cache-control", "x-intercepted"]) expect(b.header.get(h)).to.equal(a.header.get(h)).and.not.equal(null);
    expect(seen).to.deep.equal(["GetSkillGuide:ann", "GetSkillGuide:ann"]);
  });

  it("raises the same error: code, reason, details, and the headers set before the throw", async () => {
    const { router, direct } = setup();
    const [a, b] = [await failure(guide(router, "refuse")), await failure(guide(direct, "refuse"))];
    expect(b.code).to.equal(Code.FailedPrecondition).and.equal(a.code);
    expect(errorReason(b)).to.equal("payment_required").and.equal(errorReason(a));
    expect(b.rawMessage).to.equal(a.rawMessage);
    expect(b.findDetails(PaymentRequiredSchema).map((d) => d.x402Version)).to.deep.equal(a.findDetails(PaymentRequiredSchema).map((d) => d.x402Version)).and.deep.equal([1]);
    for (const h of ["payment-required", "payment-response", "cache-control"]) expect(b.metadata.get(h)).to.equal(a.metadata.get(h)).and.not.equal(null);
  });

  it("turns an unexpected throw into a ConnectError of the same code, keeping the cause", async () => {
    const { router, direct } = setup();
    const [a, b] = [await failure(guide(router, "boom")), await failure(guide(direct, "boom"))];
    expect(b.code).to.equal(Code.Internal).and.equal(a.code);
    expect((b.cause as Error).message).to.equal("not a ConnectError");
  });

  it("answers a method nobody registered like the router does", async () => {
    const { router, direct } = setup();
    const call = (t: Transport) => failure(t.unary(CatalogService.method.listServices, undefined, undefined, undefined, create(ListServicesRequestSchema), undefined));
    const [a, b] = [await call(router), await call(direct)];
    expect(b.code).to.equal(Code.Unimplemented).and.equal(a.code);
  });
});
