/**
 * JSON schemas of the station routes: what they accept (ajv checks it before the handler) and what they
 * answer (the OpenAPI document; the answers themselves are the snapshot's pre-serialised bytes, which
 * the contract test checks against these).
 */
import { IATA_CODE_PATTERN } from "../domain/iata";
import { nullable, objectSchema, type SchemaOf } from "../http/schema";
import { MAX_CODES_PER_REQUEST } from "./station.service";
import {
  type Address,
  type Contact,
  type Interval,
  type OpeningDay,
  type ProductHandling,
  type Station,
  type TemperatureProducts,
  type TemperatureRange,
  WEEKDAYS,
} from "./station.view";

const nullableString = { type: ["string", "null"] } as const;
const nullableBoolean = { type: ["boolean", "null"] } as const;

const address = nullable(
  objectSchema<Address>({
    properties: {
      street: nullableString,
      streetNo: nullableString,
      building: nullableString,
      zipCode: nullableString,
      city: nullableString,
    },
  }),
);

const contact = nullable(
  objectSchema<Contact>({
    properties: {
      generalEmail: nullableString,
      generalPhone: nullableString,
      handlingEmail: nullableString,
      handlingPhone: nullableString,
    },
  }),
);

const openingHours: SchemaOf<OpeningDay[] | null> = {
  type: ["array", "null"],
  description: "Per weekday, the intervals the station is open, in its local time (HH:mm; close may be 24:00).",
  items: objectSchema<OpeningDay>({
    properties: {
      day: { type: "string", enum: WEEKDAYS },
      hours: {
        type: "array",
        items: objectSchema<Interval>({
          properties: {
            open: { type: "string", examples: ["08:00"] },
            close: { type: "string", examples: ["17:30"] },
          },
        }),
      },
    },
  }),
};

export const stationSchema = objectSchema<Station>({
  $id: "Station",
  properties: {
    code: { type: "string", pattern: IATA_CODE_PATTERN.source, examples: ["FRA"] },
    name: { type: "string" },
    freighterHandling: nullableBoolean,
    passengerAircraftHandling: nullableBoolean,
    truckHandling: nullableBoolean,
    countryShort: nullableString,
    countryLong: nullableString,
    import: objectSchema<Station["import"]>({
      description: "Import handling. Where the station gives no import address, `address` is the export address.",
      properties: {
        address,
        contact,
        firmsCode: nullableString,
        ciscFee: nullableString,
        storage: nullableString,
        externalComment: nullableString,
        openingHours,
      },
    }),
    export: objectSchema<Station["export"]>({ properties: { address, contact, openingHours } }),
  },
});

const product = objectSchema<ProductHandling>({
  properties: {
    available: { type: "boolean" },
    temperatureRanges: {
      type: "array",
      description: "Degrees Celsius",
      items: objectSchema<TemperatureRange>({ properties: { min: { type: "number" }, max: { type: "number" } } }),
    },
    containerTypes: { type: "array", items: { type: "string" } },
    services: { type: "array", items: { type: "string" } },
    contact: objectSchema<ProductHandling["contact"]>({ properties: { email: nullableString, phone: nullableString } }),
    comment: nullableString,
  },
});

export const temperatureProductsSchema = objectSchema<TemperatureProducts>({
  $id: "TemperatureProducts",
  properties: { code: { type: "string", pattern: IATA_CODE_PATTERN.source }, active: product, passive: product },
});

/** The Problem schema lives with the error rendering (http/schema.ts); exported here as before. */
export { problemSchema } from "../http/schema";

/** A station code in the path; the route's reading (StationService.parseCode) words the refusal. */
export const iataParams = {
  type: "object",
  required: ["IATACode"],
  properties: {
    IATACode: {
      type: "string",
      pattern: IATA_CODE_PATTERN.source,
      description: "IATA station code, three upper-case letters",
      examples: ["FRA"],
    },
  },
} as const;

/** POST …/stations/station: exactly `stationCodes`, 1 to 100 codes. */
export const stationCodesBody = {
  type: "object",
  required: ["stationCodes"],
  additionalProperties: false,
  properties: {
    stationCodes: {
      type: "array",
      minItems: 1,
      maxItems: MAX_CODES_PER_REQUEST,
      description: "Duplicates are answered once, in the position of their first occurrence",
      items: { type: "string", pattern: IATA_CODE_PATTERN.source, examples: ["FRA"] },
    },
  },
} as const;
