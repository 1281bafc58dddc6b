-- CreateTable
CREATE TABLE "awb_stream_pruned" (
    "awb" TEXT NOT NULL,
    "pruned_through" BIGINT NOT NULL,

    CONSTRAINT "awb_stream_pruned_pkey" PRIMARY KEY ("awb")
);

-- What retention deleted before this migration: positions are only ever missing because they were
-- deleted (a rolled-back ingestion gives its numbers back), so each AWB's highest missing position.
INSERT INTO "awb_stream_pruned" ("awb", "pruned_through")
SELECT s."awb", max(g.p)
FROM "awb_stream" s
CROSS JOIN LATERAL generate_series(1::bigint, s."last_position") AS g(p)
WHERE s."last_position" > (SELECT count(*) FROM "status_event" e WHERE e."awb" = s."awb")
  AND NOT EXISTS (SELECT 1 FROM "status_event" e WHERE e."awb" = s."awb" AND e."position" = g.p)
GROUP BY s."awb";
