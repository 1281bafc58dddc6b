// Where the API specification's text and the ontologies disagree on how many values a property takes,
// the derived files follow the text, and say so. Each entry must still match a restriction of the
// ontology (the script fails otherwise), so a new ontology release that settles the point shows here.
import { API, CARGO } from "./namespaces";

export interface SpecificationRequirement {
  classIri: string;
  propertyIri: string;
  /** The least number of values the specification asks for (the ontology's own minimum is replaced). */
  min: number;
  because: string;
}

const DEFAULT_FALSE =
  "the specification's class diagrams give notifyRequestStatusChange the default FALSE, and its examples leave it out; the ontology says exactly 1";

export const SPECIFICATION_REQUIREMENTS: readonly SpecificationRequirement[] = [
  {
    classIri: `${CARGO}LogisticsEvent`,
    propertyIri: `${CARGO}eventDate`,
    min: 1,
    because:
      'Logistics Events page: "Every Logistics Event MUST have a property eventDate (xsd:dateTime)"; the ontology says at most 1',
  },
  {
    classIri: `${API}Collection`,
    propertyIri: `${API}hasItem`,
    min: 0,
    because:
      "Logistics Events page: a query that finds nothing answers a Collection without api:hasItem (api:hasTotalItems 0); the ontology says someValuesFrom owl:Thing",
  },
  {
    classIri: `${API}EventCreationResult`,
    propertyIri: `${API}hasLogisticsEvent`,
    min: 0,
    because:
      'Logistics Events page: api:hasLogisticsEvent is "only present when api:hasHTTPStatus is 201"; the ontology says exactly 1',
  },
  ...[`${API}AccessDelegation`, `${API}Change`, `${API}Subscription`, `${API}Verification`].map((classIri) => ({
    classIri,
    propertyIri: `${API}notifyRequestStatusChange`,
    min: 0,
    because: DEFAULT_FALSE,
  })),
];

export function specificationRequirement(classIri: string, propertyIri: string): SpecificationRequirement | undefined {
  return SPECIFICATION_REQUIREMENTS.find((r) => r.classIri === classIri && r.propertyIri === propertyIri);
}
