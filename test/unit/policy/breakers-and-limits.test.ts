import { expect } from "chai";
import { CircuitBreakers, CircuitOpenError } from "../../../src/policy/circuit-breakers.js";
import { PayerRateLimiter } from "../../../src/policy/payer-rate-limit.js";

describe("circuit breakers and the payer rate limit (clock injected)", () => {
  it("opens after the threshold of consecutive failures, admits one trial after the cooldown, and reopens on its failure", () => {
    let now = 0;
    const b = new CircuitBreakers({ threshold: 3, cooldownMs: 1_000 }, () => now);
    const up = "https://api.kraken.com/0/public/Ticker?pair=XBTUSD";
    b.failure(up);
    b.failure(up);
    b.success(up); // a success resets the count
    b.failure(up);
    b.failure(up);
    expect(b.state("https://api.kraken.com")).to.equal("closed");
    b.failure(up);
    expect(b.state("https://api.kraken.com")).to.equal("open");
    expect(() => b.admit(up)).to.throw(CircuitOpenError, /api\.kraken\.com/);
    expect(b.state("https://other.example")).to.equal("closed");
    now = 1_000;
    expect(b.state(up)).to.equal("half_open");
    b.admit(up); // the one trial
    expect(() => b.admit(up)).to.throw(CircuitOpenError);
    b.failure(up);
    expect(b.state(up)).to.equal("open");
    now = 2_500;
    b.admit(up);
    b.success(up);
    expect(b.state(up)).to.equal("closed");
    b.admit(up);
    b.admit(up);
  });

  it("gives each payer a bucket of `burst` calls refilled at `perMinute`, case-insensitively, and reports the wait", () => {
    let now = 0;
    const l = new PayerRateLimiter({ perMinute: 60, burst: 2 }, () => now);
    expect(l.take("0xAbC")).to.equal(0);
    expect(l.take("0xabc")).to.equal(0);
    expect(l.take("0xABC")).to.equal(1_000);
    expect(l.take("0xdef")).to.equal(0);
    now = 1_000;
    expect(l.take("0xabc")).to.equal(0);
    expect(l.take("0xabc")).to.be.greaterThan(0);
    expect(new PayerRateLimiter({ perMinute: 0, burst: 1 }).take("0xabc")).to.equal(0);
  });
});
