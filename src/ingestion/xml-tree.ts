import { XMLParser, XMLValidator } from "fast-xml-parser";

/**
 * XML read safely for Cargo-XML, and the few readers the XFSU parser walks the result with.
 * Safety: a document with a DOCTYPE is refused before parsing (Cargo-XML messages have none, and
 * without one no entity can be declared, let alone expanded or fetched: fast-xml-parser never
 * fetches external entities anyway, and here only XML's predefined entities are replaced); the
 * caller bounds the size; fast-xml-parser refuses nesting deeper than 100 elements and element names
 * such as `__proto__`; anything it throws becomes a problem, never an exception.
 */

/** The elements an XFSU repeats: always lists, so one occurrence reads like several. */
const REPEATED = new Set([
  "MasterConsignment",
  "ReportedStatus",
  "AssociatedStatusConsignment",
  "SpecifiedLogisticsTransportMovement",
  "SpecifiedLocation",
]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  // rsm:, ram: and other prefixes vary between senders; the element names are what Cargo-XML fixes.
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  htmlEntities: false,
  isArray: (name) => REPEATED.has(name),
});

export type XmlRead = { document: Record<string, unknown>; problem?: undefined } | { problem: XmlProblem };
export interface XmlProblem {
  line: number | null;
  reason: string;
}

export function readXml(source: string): XmlRead {
  let text = source;
  const doctype = /<!DOCTYPE/i.exec(text);
  if (doctype)
    return {
      problem: {
        line: lineAt(text, doctype.index),
        reason: "has a DOCTYPE, which Cargo-XML messages do not have and the gateway does not read",
      },
    };
  const nul = text.indexOf("\u0000");
  if (nul >= 0)
    // XML allows no NUL character anywhere (XML 1.0, Char); the validator below lets it through.
    return {
      problem: { line: lineAt(text, nul), reason: "is not well-formed XML: it holds the NUL character (U+0000)" },
    };
  const decoded = withCharacterReferencesDecoded(text);
  if (typeof decoded !== "string") return { problem: decoded };
  text = decoded;
  try {
    const valid = XMLValidator.validate(text);
    if (valid !== true)
      return { problem: { line: valid.err.line, reason: `is not well-formed XML: ${valid.err.msg}` } };
    const document: unknown = parser.parse(text);
    if (!isElement(document)) return { problem: { line: null, reason: "holds no XML element" } };
    return { document };
  } catch (error) {
    return { problem: { line: null, reason: `could not be read as XML: ${(error as Error).message}` } };
  }
}

const CHARACTER_REFERENCE = /&#(?:x([0-9a-fA-F]{1,8})|([0-9]{1,10}));/g;
/** Characters that would be read as markup if written out: kept as the predefined entity instead. */
const MARKUP: Readonly<Record<string, string>> = {
  "<": "&lt;",
  "&": "&amp;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** XML 1.0's Char production. */
function isXmlCharacter(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * The text with its numeric character references (`&#68;`, `&#x44;`) replaced by the characters
 * they name, as XML requires (the parser, set up without HTML entities, leaves them as they are and
 * drops `&#0;`); or the problem of the first one naming no XML character. Markup characters stay
 * escaped (`&#60;` becomes `&lt;`, which the parser then reads as "<"). Not told apart: a reference
 * inside a comment or a CDATA section, which XML leaves unread — Cargo-XML messages put none there.
 */
function withCharacterReferencesDecoded(text: string): string | XmlProblem {
  let problem: XmlProblem | undefined;
  const decoded = text.replace(
    CHARACTER_REFERENCE,
    (reference, hex: string | undefined, decimal: string | undefined, at: number) => {
      const code = hex !== undefined ? parseInt(hex, 16) : Number(decimal);
      if (!isXmlCharacter(code)) {
        problem ??= {
          line: lineAt(text, at),
          reason: `is not well-formed XML: the character reference ${reference} names no XML character`,
        };
        return reference;
      }
      const character = String.fromCodePoint(code);
      return MARKUP[character] ?? character;
    },
  );
  return problem ?? decoded;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function isElement(node: unknown): node is Record<string, unknown> {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}

/** The child elements named `name` (one or several), in document order. */
export function children(node: unknown, name: string): unknown[] {
  if (!isElement(node) || !Object.hasOwn(node, name)) return [];
  const value = node[name];
  return Array.isArray(value) ? (value as unknown[]) : [value];
}

/** The first child element named `name`, or undefined. */
export function child(node: unknown, name: string): unknown {
  return children(node, name)[0];
}

/** An element's text, trimmed; null when it is absent, empty or has child elements instead. */
export function textOf(node: unknown): string | null {
  let text: unknown = node;
  if (isElement(node)) text = Object.hasOwn(node, "#text") ? node["#text"] : undefined;
  if (typeof text !== "string") return null;
  const trimmed = text.trim();
  return trimmed === "" ? null : trimmed;
}

/** The text at a path of child elements ("SpecifiedEvent", "OccurrenceDateTime"), first ones taken. */
export function textAt(node: unknown, ...path: string[]): string | null {
  return textOf(path.reduce<unknown>((current, name) => child(current, name), node));
}

export function attributeOf(node: unknown, name: string): string | null {
  if (!isElement(node) || !Object.hasOwn(node, `@${name}`)) return null;
  const value = node[`@${name}`];
  return typeof value === "string" ? value.trim() : null;
}
