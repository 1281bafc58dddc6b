import type * as Jose from "jose" with { "resolution-mode": "import" };

export type JoseModule = typeof Jose;

let loading: Promise<JoseModule> | undefined;

/** `jose` is an ES module only: loaded once, on the first access token (under Jest, transformed to CommonJS). */
export function loadJose(): Promise<JoseModule> {
  return (loading ??= import("jose"));
}
