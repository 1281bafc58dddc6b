// test/onerecord/examples/: the API specification's JSON-LD examples as IATA wrote them, and an
// index.json saying which of them the reference folder's README knows to be defective, and why.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The defects the reference folder's README lists ("Known defects in the examples"). */
export const KNOWN_DEFECTS: Readonly<Record<string, string>> = {
  "Subscriptions_example2.json":
    'a bare "Subscription" as @type (a relative IRI, not api:Subscription) and api:contentType, which the API ontology does not have (api:hasContentType)',
  "LogisticsEvents_list.json":
    "its first event links its Shipment with cargo:linkedObject, which the cargo ontology does not have (cargo:eventFor)",
  "ServerInformation.json":
    "api:hasSupportedOntology lists versioned ontology IRIs where the specification asks for unversioned ones (https://onerecord.iata.org/ns/cargo)",
};

export interface ExampleFiles {
  /** File name → content, as read. */
  copies: Map<string, string>;
  index: object;
}

export function specificationExamples(referenceFolder: string): ExampleFiles {
  const folder = path.join(referenceFolder, "api", "examples");
  const readme = readFileSync(path.join(referenceFolder, "README.md"), "utf8");
  const names = readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .sort();
  for (const name of Object.keys(KNOWN_DEFECTS)) {
    if (!names.includes(name)) throw new Error(`${name}: listed as a known defect here but not in ${folder}`);
    if (!readme.includes(name)) throw new Error(`${name}: the reference README no longer lists it as defective`);
  }
  const copies = new Map(names.map((name) => [name, readFileSync(path.join(folder, name), "utf8")] as const));
  const examples = Object.fromEntries(
    names.map((name) => {
      const why = KNOWN_DEFECTS[name];
      return [name, why === undefined ? { knownDefective: false } : { knownDefective: true, why }];
    }),
  );
  return {
    copies,
    index: {
      source:
        "api/examples of the ONE Record API specification 2.3.0 (IATA, MIT licence: ONE-Record-LICENSE beside this file)",
      knownDefectsFrom: "the reference folder's README.md, 'Known defects in the examples'",
      examples,
    },
  };
}
