import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Checker } from "../domain/checker";
import { validationError } from "../errors";
import { addSchemas, ALWAYS, problems, ref, WITH_BODY } from "../http/schema";
import { fastLaneOf, JSON_TYPE } from "../http/fast-lane";
import type { StationService } from "./station.service";
import { iataParams, stationCodesBody, stationSchema, temperatureProductsSchema } from "./station.schemas";

const tags: readonly string[] = ["stations"];

/** REST routes 4.5–4.8. Station reads need no key. Answers are pre-serialised bytes from the snapshot. */
export function registerStationRoutes(
  app: FastifyInstance,
  { stations, carrier }: { stations: StationService; carrier: string },
): void {
  const base = `/${carrier}/stations`;
  const sendJson = (reply: FastifyReply, json: string) => reply.type(JSON_TYPE).send(json);
  addSchemas(app, stationSchema, temperatureProductsSchema);

  /** The asked codes, checked as the service checks them (duplicates collapsed); throws VALIDATION_FAILED. */
  const readCodes = (request: FastifyRequest): string[] => {
    const check = new Checker();
    const body = check.object(request.body, "body", ["stationCodes"], { nullable: false });
    if (!body || !check.ok) throw validationError(check.problems);
    return stations.parseCodeList(body.stationCodes);
  };
  const readCode = (request: FastifyRequest) =>
    stations.parseCode((request.params as { IATACode?: unknown }).IATACode, "IATACode");

  app.get(
    `${base}/stationcodes`,
    {
      schema: {
        tags,
        operationId: "listStationCodes",
        summary: "Every station code, sorted",
        response: {
          200: { description: "The codes", type: "array", items: { type: "string" } },
          ...problems(ALWAYS),
        },
      },
      config: { auth: "public" },
    },
    (_request, reply) => sendJson(reply, stations.snapshot().codesJson),
  );

  app.post(
    `${base}/station`,
    {
      schema: {
        tags,
        operationId: "getStations",
        summary: "Several stations, in the order asked (duplicates collapsed)",
        body: stationCodesBody,
        response: {
          200: { description: "The stations", type: "array", items: ref("Station") },
          ...problems([...WITH_BODY, 404, ...ALWAYS], { 404: "A code is unknown (STATION_NOT_FOUND, unknownCodes)" }),
        },
      },
      config: { auth: "public", explainInvalid: readCodes },
    },
    (request, reply) => {
      const entries = stations.getMany(readCodes(request));
      return sendJson(reply, `[${entries.map((e) => e.json).join(",")}]`);
    },
  );

  const oneStation = {
    params: iataParams,
    response: {
      400: problems([400], { 400: "The code is not three upper-case letters (VALIDATION_FAILED)" })[400],
      404: problems([404], { 404: "No station has the code (STATION_NOT_FOUND)" })[404],
      ...problems(ALWAYS),
    },
  };

  // The same answers as the two routes below give with 200, before Fastify routes the request
  // (http/fast-lane.ts); anything else (an unknown code, a malformed one) reaches the routes.
  const lane = fastLaneOf(app);
  const stationRoute = `${base}/station/:IATACode`;
  const productsRoute = `${base}/products/:IATACode`;
  lane.get(`${base}/station/`, (code) => {
    const entry = stations.snapshot().get(code);
    return entry && { route: stationRoute, json: entry.json };
  });
  lane.get(`${base}/products/`, (code) => {
    const entry = stations.snapshot().get(code);
    return entry && { route: productsRoute, json: entry.productsJson };
  });

  app.get<{ Params: { IATACode: string } }>(
    stationRoute,
    {
      schema: {
        tags,
        operationId: "getStation",
        summary: "One station",
        ...oneStation,
        response: { 200: { description: "The station", ...ref("Station") }, ...oneStation.response },
      },
      config: { auth: "public", explainInvalid: readCode },
    },
    (request, reply) => sendJson(reply, stations.get(request.params.IATACode, "IATACode").json),
  );

  app.get<{ Params: { IATACode: string } }>(
    productsRoute,
    {
      schema: {
        tags,
        operationId: "getStationProducts",
        summary: "Temperature-controlled product handling at a station",
        ...oneStation,
        response: {
          200: { description: "The station's products", ...ref("TemperatureProducts") },
          ...oneStation.response,
        },
      },
      config: { auth: "public", explainInvalid: readCode },
    },
    (request, reply) => sendJson(reply, stations.get(request.params.IATACode, "IATACode").productsJson),
  );
}
