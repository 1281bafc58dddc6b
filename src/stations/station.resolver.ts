import { Arg, Ctx, FieldResolver, Query, Resolver, Root } from "type-graphql";
import { isOpenAt } from "../domain/opening-hours";
import { Public } from "../graphql-core/authorization";
import type { GraphQLContext } from "../graphql-core/context";
import type { ResponseCachePolicy } from "../graphql-core/response-cache-policy";
import type { StationView } from "./station.snapshot";
import { StationSide, StationType } from "./station.types";

/**
 * What the GraphQL response cache may keep: these root fields read only the station snapshot, which
 * changes only on import (the cache is keyed by its version). A field added here or under Station
 * MUST NOT depend on the caller or the clock, or MUST be listed in `timeDependent` with the argument
 * that pins it.
 */
export const STATION_CACHE_POLICY: ResponseCachePolicy = {
  rootFields: new Set(["stationCodes", "station", "stations"]),
  timeDependent: new Map([["openAt", "at"]]),
};

/**
 * `openAt` without an instant ("open now"), kept per station and side for the current minute. The
 * answer is read from the local "HH:mm" at the station, which cannot change within a UTC minute (no
 * time zone in use today has an offset with seconds), so a dashboard asking every station whether it
 * is open computes each answer once a minute, not on every request (answers with the clock in them
 * are never in the response cache). An instant given as `at` may be in a past with other offsets: it
 * is computed every time.
 */
const openNow = new WeakMap<StationView, { minute: number } & Partial<Record<StationSide, boolean | null>>>();

@Resolver(() => StationType)
export class StationResolver {
  @Query(() => [String], { description: "Every station code, sorted." })
  @Public()
  stationCodes(@Ctx() ctx: GraphQLContext): readonly string[] {
    return ctx.services.stations.snapshot().codes;
  }

  @Query(() => StationType, { nullable: true, description: "One station; null when the code is unknown." })
  @Public()
  station(@Arg("code", () => String) code: string, @Ctx() ctx: GraphQLContext): StationView | null {
    return ctx.services.stations.find(code)?.view ?? null;
  }

  @Query(() => [StationType], {
    nullable: "items",
    description:
      "Stations in the order asked (at most 100; duplicates kept); null where a code is unknown. Without codes: every station.",
  })
  @Public()
  stations(
    @Arg("codes", () => [String], { nullable: true }) codes: string[] | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): ReadonlyArray<StationView | null> {
    const service = ctx.services.stations;
    if (codes == null) return service.snapshot().all;
    const valid = service.parseCodeList(codes, "codes");
    const byCode = new Map(valid.map((c) => [c, service.snapshot().get(c)?.view ?? null]));
    return codes.map((c) => byCode.get(c) ?? null);
  }

  @FieldResolver(() => Boolean, {
    nullable: true,
    description:
      "Whether the import or export counter is open at the instant (default: now), from its opening hours in the station's time zone; null when either is unknown.",
  })
  @Public()
  openAt(
    @Root() station: StationView,
    @Arg("side", () => StationSide, { defaultValue: StationSide.EXPORT }) side: StationSide,
    @Arg("at", () => Date, { nullable: true }) at: Date | null,
  ): boolean | null {
    const hours = side === StationSide.IMPORT ? station.import.openingHours : station.export.openingHours;
    if (at) return isOpenAt(hours, station.timeZone, at);
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    let known = openNow.get(station);
    if (known?.minute !== minute) openNow.set(station, (known = { minute }));
    return (known[side] ??= isOpenAt(hours, station.timeZone, new Date(now)));
  }
}
