/** JSON schemas of the station routes, for the OpenAPI document. Validation itself happens in the service. */
const nullableString = { type: ["string", "null"] } as const;
const nullableBoolean = { type: ["boolean", "null"] } as const;

const address = {
  type: ["object", "null"],
  required: ["street", "streetNo", "building", "zipCode", "city"],
  properties: {
    street: nullableString,
    streetNo: nullableString,
    building: nullableString,
    zipCode: nullableString,
    city: nullableString,
  },
} as const;

const contact = {
  type: ["object", "null"],
  required: ["generalEmail", "generalPhone", "handlingEmail", "handlingPhone"],
  properties: {
    generalEmail: nullableString,
    generalPhone: nullableString,
    handlingEmail: nullableString,
    handlingPhone: nullableString,
  },
} as const;

const openingHours = {
  type: ["array", "null"],
  description: "Per weekday, the intervals the station is open, in its local time (HH:mm; close may be 24:00).",
  items: {
    type: "object",
    required: ["day", "hours"],
    properties: {
      day: { type: "string", enum: ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"] },
      hours: {
        type: "array",
        items: {
          type: "object",
          required: ["open", "close"],
          properties: { open: { type: "string", example: "08:00" }, close: { type: "string", example: "17:30" } },
        },
      },
    },
  },
} as const;

export const stationSchema = {
  $id: "Station",
  type: "object",
  required: [
    "code",
    "name",
    "freighterHandling",
    "passengerAircraftHandling",
    "truckHandling",
    "countryShort",
    "countryLong",
    "import",
    "export",
  ],
  properties: {
    code: { type: "string", pattern: "^[A-Z]{3}$", example: "FRA" },
    name: { type: "string" },
    freighterHandling: nullableBoolean,
    passengerAircraftHandling: nullableBoolean,
    truckHandling: nullableBoolean,
    countryShort: nullableString,
    countryLong: nullableString,
    import: {
      type: "object",
      description: "Import handling. Where the station gives no import address, `address` is the export address.",
      required: ["address", "contact", "firmsCode", "ciscFee", "storage", "externalComment", "openingHours"],
      properties: {
        address,
        contact,
        firmsCode: nullableString,
        ciscFee: nullableString,
        storage: nullableString,
        externalComment: nullableString,
        openingHours,
      },
    },
    export: {
      type: "object",
      required: ["address", "contact", "openingHours"],
      properties: { address, contact, openingHours },
    },
  },
} as const;

const product = {
  type: "object",
  required: ["available", "temperatureRanges", "containerTypes", "services", "contact", "comment"],
  properties: {
    available: { type: "boolean" },
    temperatureRanges: {
      type: "array",
      description: "Degrees Celsius",
      items: { type: "object", properties: { min: { type: "number" }, max: { type: "number" } } },
    },
    containerTypes: { type: "array", items: { type: "string" } },
    services: { type: "array", items: { type: "string" } },
    contact: { type: "object", properties: { email: nullableString, phone: nullableString } },
    comment: nullableString,
  },
} as const;

export const temperatureProductsSchema = {
  $id: "TemperatureProducts",
  type: "object",
  required: ["code", "active", "passive"],
  properties: { code: { type: "string" }, active: product, passive: product },
} as const;

export const problemSchema = {
  $id: "Problem",
  type: "object",
  description: "RFC 9457 problem details (application/problem+json)",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string" },
    requestId: { type: "string" },
    errors: {
      type: "array",
      items: { type: "object", properties: { field: { type: "string" }, message: { type: "string" } } },
    },
  },
  additionalProperties: true,
} as const;

export const iataParam = {
  type: "object",
  required: ["IATACode"],
  properties: {
    IATACode: { type: "string", description: "IATA station code, three upper-case letters", example: "FRA" },
  },
} as const;
