-- Fenced outbox: the claim that holds a delivery's lease.
ALTER TABLE "delivery" ADD COLUMN     "lease_token" UUID;

-- Per-AWB stream positions. Events stored before this migration are numbered in storage order (seq):
-- before it, there was no commit-order guarantee to preserve.
ALTER TABLE "status_event" ADD COLUMN     "position" BIGINT;
UPDATE "status_event" e SET "position" = n.position
FROM (SELECT id, row_number() OVER (PARTITION BY awb ORDER BY seq) AS position FROM "status_event") n
WHERE e.id = n.id;
ALTER TABLE "status_event" ALTER COLUMN "position" SET NOT NULL;

-- CreateTable
CREATE TABLE "awb_stream" (
    "awb" TEXT NOT NULL,
    "last_position" BIGINT NOT NULL,

    CONSTRAINT "awb_stream_pkey" PRIMARY KEY ("awb")
);
INSERT INTO "awb_stream" ("awb", "last_position") SELECT awb, max("position") FROM "status_event" GROUP BY awb;

-- CreateIndex
CREATE UNIQUE INDEX "status_event_awb_position_key" ON "status_event"("awb", "position");
