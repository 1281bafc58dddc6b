import { XSD } from "./jsonld-context";
import type { NodeObject } from "./jsonld-tree";

/**
 * Typed literals in XML Schema 1.1's canonical lexical form, as answers carry them: a client that
 * posted `2023-04-01T10:38:01.000Z` reads `2023-04-01T10:38:01Z`, however the value was written. Only
 * the datatypes below are rewritten; a value that is not valid in its datatype is left as it was.
 */

const INTEGER_TYPES = new Set(
  [
    "integer",
    "long",
    "int",
    "short",
    "byte",
    "nonNegativeInteger",
    "positiveInteger",
    "nonPositiveInteger",
    "negativeInteger",
    "unsignedLong",
    "unsignedInt",
    "unsignedShort",
    "unsignedByte",
  ].map((name) => `${XSD}${name}`),
);

const DATE_TIME = /^(-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$/;
const DATE_OR_TIME = /^(-?\d{4,}-\d\d-\d\d|\d\d:\d\d:\d\d(\.\d+)?)(Z|[+-]\d\d:\d\d)?$/;

/** The canonical form of `value` in `datatype`; `value` itself when there is none to give. */
export function canonicalLiteral(datatype: string, value: string): string {
  if (datatype === `${XSD}dateTime`) {
    const match = DATE_TIME.exec(value);
    if (!match) return value;
    return `${match[1]}${fraction(match[2])}${timezone(match[3])}`;
  }
  if (datatype === `${XSD}date` || datatype === `${XSD}time`) {
    const match = DATE_OR_TIME.exec(value);
    if (!match) return value;
    const [whole, , fractionPart, zone] = match;
    const body = whole.slice(0, whole.length - (zone?.length ?? 0));
    const withoutFraction = fractionPart ? body.slice(0, body.length - fractionPart.length) : body;
    return `${withoutFraction}${fraction(fractionPart)}${timezone(zone)}`;
  }
  if (datatype === `${XSD}boolean`) return value === "1" ? "true" : value === "0" ? "false" : value;
  if (INTEGER_TYPES.has(datatype)) {
    const match = /^([+-]?)0*(\d+)$/.exec(value.trim());
    if (!match) return value;
    return match[2] === "0" ? "0" : `${match[1] === "-" ? "-" : ""}${match[2]}`;
  }
  if (datatype === `${XSD}decimal`) {
    const match = /^([+-]?)0*(\d*)(?:\.(\d*?)0*)?$/.exec(value.trim());
    if (!match || !/\d/.test(value)) return value;
    const digits = `${match[2] || "0"}${match[3] ? `.${match[3]}` : ""}`;
    return digits === "0" || match[1] !== "-" ? digits : `-${digits}`;
  }
  return value;
}

/** Fractional seconds without trailing zeros, and without the point when nothing is left. */
function fraction(part: string | undefined): string {
  const digits = part?.slice(1).replace(/0+$/, "") ?? "";
  return digits === "" ? "" : `.${digits}`;
}

function timezone(zone: string | undefined): string {
  if (zone === undefined) return "";
  return zone === "+00:00" || zone === "-00:00" ? "Z" : zone;
}

/** The tree with each typed literal in its canonical form (a copy where anything changes). */
export function canonicalLiterals(node: NodeObject): NodeObject {
  let changed = false;
  const out: NodeObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith("@") || !Array.isArray(value)) {
      out[key] = value;
      continue;
    }
    out[key] = value.map((item: unknown) => {
      if (item === null || typeof item !== "object") return item;
      const record = item as Record<string, unknown>;
      if ("@value" in record) {
        const [literal, type] = [record["@value"], record["@type"]];
        if (typeof literal !== "string" || typeof type !== "string") return item;
        const canonical = canonicalLiteral(type, literal);
        if (canonical === literal) return item;
        changed = true;
        return { ...record, "@value": canonical };
      }
      const inner = canonicalLiterals(record);
      if (inner !== record) changed = true;
      return inner;
    });
  }
  return changed ? out : node;
}
