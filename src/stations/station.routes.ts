import type { FastifyInstance, FastifyReply } from "fastify";
import { Checker } from "../domain/checker";
import { validationError } from "../errors";
import type { StationService } from "./station.service";
import { iataParam } from "./station.schemas";

const JSON_TYPE = "application/json; charset=utf-8";
const problem = { $ref: "Problem#" };
const tags: readonly string[] = ["stations"];

/** REST routes 4.5–4.8. Station reads need no key. Answers are pre-serialised bytes from the snapshot. */
export function registerStationRoutes(
  app: FastifyInstance,
  { stations, carrier }: { stations: StationService; carrier: string },
): void {
  const base = `/${carrier}/stations`;
  const sendJson = (reply: FastifyReply, json: string) => reply.type(JSON_TYPE).send(json);

  app.get(
    `${base}/stationcodes`,
    {
      schema: {
        tags,
        summary: "Every station code, sorted",
        response: { 200: { type: "array", items: { type: "string" } } },
      },
    },
    (_request, reply) => sendJson(reply, stations.snapshot().codesJson),
  );

  app.post<{ Body: unknown }>(
    `${base}/station`,
    {
      schema: {
        tags,
        summary: "Several stations, in the order asked (duplicates collapsed)",
        body: {
          type: "object",
          required: ["stationCodes"],
          properties: {
            stationCodes: {
              type: "array",
              minItems: 1,
              maxItems: 100,
              items: { type: "string", pattern: "^[A-Z]{3}$" },
            },
          },
        },
        response: { 200: { type: "array", items: { $ref: "Station#" } }, 400: problem, 404: problem },
      },
    },
    (request, reply) => {
      const check = new Checker();
      const body = check.object(request.body, "body", ["stationCodes"]);
      if (!body) throw validationError(check.problems);
      if (!check.ok) throw validationError(check.problems);
      const entries = stations.getMany(stations.parseCodeList(body.stationCodes));
      return sendJson(reply, `[${entries.map((e) => e.json).join(",")}]`);
    },
  );

  app.get<{ Params: { IATACode: string } }>(
    `${base}/station/:IATACode`,
    {
      schema: {
        tags,
        summary: "One station",
        params: iataParam,
        response: { 200: { $ref: "Station#" }, 400: problem, 404: problem },
      },
    },
    (request, reply) => sendJson(reply, stations.get(request.params.IATACode, "IATACode").json),
  );

  app.get<{ Params: { IATACode: string } }>(
    `${base}/products/:IATACode`,
    {
      schema: {
        tags,
        summary: "Temperature-controlled product handling at a station",
        params: iataParam,
        response: { 200: { $ref: "TemperatureProducts#" }, 400: problem, 404: problem },
      },
    },
    (request, reply) => sendJson(reply, stations.get(request.params.IATACode, "IATACode").productsJson),
  );
}
