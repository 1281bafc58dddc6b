import { isLogisticsObjectClass } from "../../src/onerecord/objects/object-model";
import cargo from "../../src/onerecord/vocabulary/cargo.json";

export const CARGO = "https://onerecord.iata.org/ns/cargo#";
export const API = "https://onerecord.iata.org/ns/api#";
export const XSD = "http://www.w3.org/2001/XMLSchema#";
/** The prefixes the tests' bodies are written with. */
export const CONTEXT = { cargo: CARGO, api: API };

/** Local names of the cargo ontology's LogisticsObject classes: each a topic a type subscription may take. */
export const TYPE_CLASSES = Object.keys(cargo.classes)
  .filter((iri) => isLogisticsObjectClass(iri))
  .map((iri) => iri.slice(CARGO.length));

/**
 * Fresh AWBs with a valid check digit, serials counted up from `from` (each test file its own range,
 * so files sharing a database never collide).
 */
export function awbSequence(from: number, airline = "020"): () => string {
  let serial = from;
  return () => {
    const s = String(++serial);
    return `${airline}-${s}${Number(s) % 7}`;
  };
}
