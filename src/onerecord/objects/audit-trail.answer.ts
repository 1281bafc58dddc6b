import { setImmediate as turn } from "node:timers/promises";
import { compactJsonLd } from "../jsonld-codec";
import type { NodeObject } from "../jsonld-tree";

/**
 * The audit trail compacted one action request at a time, the event loop given a turn between them:
 * compacting is synchronous work in jsonld.js (about 0.7 ms per operation of a Change), so one large
 * trail never holds every other request for its whole time. `trail` refers to each of `requests` by
 * its @id; the compacted requests take those references' places.
 */
export async function compactAuditTrail(trail: NodeObject, requests: readonly NodeObject[]): Promise<unknown> {
  const compacted = await compactJsonLd(trail);
  const byId = new Map<unknown, Record<string, unknown>>();
  for (const request of requests) {
    await turn();
    const node = await compactJsonLd(request);
    delete node["@context"];
    byId.set(request["@id"], node);
  }
  const key = Object.keys(compacted).find((name) => name.endsWith("hasActionRequest"));
  if (key === undefined) return compacted;
  const references = compacted[key];
  const whole = (reference: unknown) => {
    const id = typeof reference === "string" ? reference : (reference as { "@id"?: unknown })["@id"];
    return byId.get(id) ?? reference;
  };
  return { ...compacted, [key]: Array.isArray(references) ? references.map(whole) : whole(references) };
}
