import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { StationRecord } from "../src/stations/station.view";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { spawnServer } from "./support/process";
import { inFullSuite } from "./support/suite";

function station(code: string, overrides: Partial<StationRecord> = {}): StationRecord {
  return {
    code,
    name: `${code} Test Airport`,
    freighterHandling: true,
    passengerAircraftHandling: null,
    truckHandling: false,
    countryShort: "DE",
    countryLong: "Germany",
    timeZone: "Europe/Berlin",
    import: {
      address: null,
      contact: null,
      firmsCode: null,
      ciscFee: "EUR 30.00",
      storage: null,
      externalComment: null,
      openingHours: [{ day: "MONDAY", hours: [{ open: "08:00", close: "16:00" }] }],
    },
    export: {
      address: { street: "Cargo Road", streetNo: "1", building: null, zipCode: "60549", city: "Frankfurt" },
      contact: null,
      openingHours: null,
    },
    temperatureProducts: null,
    ...overrides,
  };
}

const BAD_FILE = {
  stations: [
    station("AAA"),
    { ...station("bbb"), timeZone: "Mars/Olympus" },
    {
      ...station("CCC"),
      import: {
        ...station("CCC").import,
        openingHours: [{ day: "FUNDAY", hours: [{ open: "18:00", close: "09:00" }] }],
      },
    },
    { ...station("AAA"), surprise: true },
    { ...station("DDD"), temperatureProducts: { active: { available: "yes" }, passive: null } },
  ],
};

describe.each(BEHAVIOUR_BACKENDS)("station import on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());

    it("rejects a bad file naming each record and field, and changes nothing", async () => {
      const { app, url } = await startApp(backend, disposers);
      const before = (await getJson(`${url}/carrier/stations/stationcodes`)).body;
      const version = app.services.stations.snapshot().version;

      await expect(app.services.stations.importStations(BAD_FILE)).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      const error = await app.services.stations
        .importStations(BAD_FILE)
        .catch((e: { errors: Array<{ field: string; message: string }> }) => e);
      const fields = (error as { errors: Array<{ field: string }> }).errors.map((e) => e.field);
      expect(fields).toEqual(
        expect.arrayContaining([
          "stations[1] (bbb).code",
          "stations[1] (bbb).timeZone",
          "stations[2] (CCC).import.openingHours[0].day",
          "stations[2] (CCC).import.openingHours[0].hours[0]",
          "stations[3] (AAA).surprise",
          "stations[3] (AAA).code",
          "stations[4] (DDD).temperatureProducts.active.available",
          "stations[4] (DDD).temperatureProducts.active.temperatureRanges",
          "stations[4] (DDD).temperatureProducts.passive",
        ]),
      );
      expect(await app.database.prisma.station.count()).toBe(before.length);
      expect((await getJson(`${url}/carrier/stations/stationcodes`)).body).toEqual(before);
      expect(app.services.stations.snapshot().version).toBe(version);
    });

    it("replaces the data set in one step and serves it at once", async () => {
      const { app, url } = await startApp(backend, disposers);
      const result = await app.services.stations.importStations([station("AAA"), station("ZZZ", { name: "Zulu" })]);
      expect(result.stationCount).toBe(2);
      expect((await getJson(`${url}/carrier/stations/stationcodes`)).body).toEqual(["AAA", "ZZZ"]);
      expect((await getJson(`${url}/carrier/stations/station/FRA`)).status).toBe(404);
      const aaa = (await getJson(`${url}/carrier/stations/station/AAA`)).body;
      expect(aaa.import.address).toEqual(aaa.export.address);
    });
  });
});

describeBackend("postgres")("station import with several instances on one PostgreSQL", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("reaches the other instance's in-memory snapshot through the version it polls", async () => {
    const first = await startApp("postgres", disposers, { STATION_REFRESH_MS: "0" });
    const second = await startApp("postgres", disposers, {
      DATABASE_URL: first.env.DATABASE_URL!,
      STATION_REFRESH_MS: "0",
    });
    expect(second.app.services.stations.snapshot().size).toBe(first.app.services.stations.snapshot().size);

    await first.app.services.stations.importStations([station("QQA"), station("QQB")]);
    expect((await getJson(`${second.url}/carrier/stations/stationcodes`)).body).not.toEqual(["QQA", "QQB"]);
    // What the poller runs every STATION_REFRESH_MS.
    expect(await second.app.services.stations.refreshIfStale()).toBe(true);
    expect((await getJson(`${second.url}/carrier/stations/stationcodes`)).body).toEqual(["QQA", "QQB"]);
    expect(await second.app.services.stations.refreshIfStale()).toBe(false);
  });

  it("polls on its own when STATION_REFRESH_MS is set", async () => {
    const first = await startApp("postgres", disposers, { STATION_REFRESH_MS: "0" });
    const second = await startApp("postgres", disposers, {
      DATABASE_URL: first.env.DATABASE_URL!,
      STATION_REFRESH_MS: "50",
    });
    await first.app.services.stations.importStations([station("QQC")]);
    for (let i = 0; i < 100 && second.app.services.stations.snapshot().codes[0] !== "QQC"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await getJson(`${second.url}/carrier/stations/stationcodes`)).body).toEqual(["QQC"]);
  });
});

inFullSuite()("npm run stations:import", () => {
  const script = path.resolve(__dirname, "../dist/scripts/import-stations.js");
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gw-import-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const run = (file: string) =>
    spawnSync(process.execPath, [script, file], {
      env: { PATH: process.env.PATH ?? "", DATA_DIR: path.join(dir, "data") },
      encoding: "utf8",
    });

  it("reports every problem of a bad file with exit code 1, then imports a good one", async () => {
    await writeFile(path.join(dir, "bad.json"), JSON.stringify(BAD_FILE));
    const bad = run(path.join(dir, "bad.json"));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("nothing was imported");
    expect(bad.stderr).toContain("stations[1] (bbb).timeZone: is not an IANA time zone");
    expect(bad.stderr).toContain("stations[3] (AAA).surprise: is not a known field");

    await writeFile(path.join(dir, "good.json"), JSON.stringify([station("AAA"), station("BBB")]));
    const good = run(path.join(dir, "good.json"));
    expect(good.stderr).toBe("");
    expect(good.stdout).toContain("Imported 2 stations");
  });

  it("refuses to open the embedded database while a server holds it", async () => {
    const server = await spawnServer({ DATA_DIR: path.join(dir, "data"), LOG_LEVEL: "info" });
    try {
      expect((await getJson(`${server.url}/carrier/stations/stationcodes`)).body).toEqual(["AAA", "BBB"]);
      const refused = run(path.join(dir, "good.json"));
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`is in use by process ${server.child.pid}`);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });
});
