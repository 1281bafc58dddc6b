import { XSD } from "../../src/onerecord/jsonld-context";
import { canonicalLiteral, canonicalLiterals } from "../../src/onerecord/xsd-canonical";

/** XML Schema 1.1's canonical lexical forms, as answers write typed literals. */
describe("canonical typed literals", () => {
  it.each([
    ["dateTime", "2023-04-01T10:38:01.000Z", "2023-04-01T10:38:01Z"],
    ["dateTime", "2023-04-01T10:38:01.120Z", "2023-04-01T10:38:01.12Z"],
    ["dateTime", "2023-04-01T10:38:01+00:00", "2023-04-01T10:38:01Z"],
    ["dateTime", "2023-04-01T10:38:01.5+02:00", "2023-04-01T10:38:01.5+02:00"],
    ["dateTime", "2023-04-01T10:38:01", "2023-04-01T10:38:01"],
    ["dateTime", "not a date", "not a date"],
    ["date", "2023-04-01+00:00", "2023-04-01Z"],
    ["time", "10:38:01.000", "10:38:01"],
    ["boolean", "1", "true"],
    ["boolean", "0", "false"],
    ["positiveInteger", "+007", "7"],
    ["integer", "-0", "0"],
    ["integer", "-012", "-12"],
    ["decimal", "1.500", "1.5"],
    ["decimal", "-0.0", "0"],
    ["decimal", "100.00", "100"],
    ["decimal", ".5", "0.5"],
    ["string", "  as it is.000Z ", "  as it is.000Z "],
  ])("xsd:%s %j is %j", (type, given, canonical) => {
    expect(canonicalLiteral(`${XSD}${type}`, given)).toBe(canonical);
  });

  it("rewrites the typed literals of a tree at any depth, and leaves a tree with none untouched", () => {
    const tree = {
      "@id": "a",
      "https://x/p": [{ "@value": "2023-04-01T10:38:01.000Z", "@type": `${XSD}dateTime` }],
      "https://x/q": [{ "@id": "b", "https://x/r": [{ "@value": "1", "@type": `${XSD}boolean` }] }],
    };
    expect(canonicalLiterals(tree)).toEqual({
      "@id": "a",
      "https://x/p": [{ "@value": "2023-04-01T10:38:01Z", "@type": `${XSD}dateTime` }],
      "https://x/q": [{ "@id": "b", "https://x/r": [{ "@value": "true", "@type": `${XSD}boolean` }] }],
    });
    const plain = { "@id": "a", "https://x/p": [{ "@value": "text" }] };
    expect(canonicalLiterals(plain)).toBe(plain);
  });
});
