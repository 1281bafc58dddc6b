import { causesOf } from "../src/domain/error-chain";

describe("causesOf", () => {
  it("walks from the error through each cause, nearest first", () => {
    const root = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const middle = new Error("fetch failed", { cause: root });
    const outer = new Error("request failed", { cause: middle });
    expect([...causesOf(outer, 5)]).toEqual([outer, middle, root]);
  });

  it("stops after maxDepth errors, so a cycle ends", () => {
    const a: { cause?: unknown } = {};
    const b = { cause: a };
    a.cause = b;
    expect([...causesOf(a, 5)]).toEqual([a, b, a, b, a]);
    expect([...causesOf(a, 0)]).toEqual([]);
  });

  it("ends at a cause that is not an object, and yields nothing for a non-object error", () => {
    const error = new Error("with a string cause", { cause: "ECONNRESET" });
    expect([...causesOf(error, 5)]).toEqual([error]);
    expect([...causesOf("a string", 5)]).toEqual([]);
    expect([...causesOf(undefined, 5)]).toEqual([]);
    expect([...causesOf(null, 5)]).toEqual([]);
  });

  it("reads plain objects too (Prisma's and undici's errors are not always Errors)", () => {
    const cause = { code: "UND_ERR_CONNECT_TIMEOUT" };
    expect([...causesOf({ name: "TypeError", cause }, 5)].map((e) => e.code ?? e.name)).toEqual([
      "TypeError",
      "UND_ERR_CONNECT_TIMEOUT",
    ]);
  });
});
