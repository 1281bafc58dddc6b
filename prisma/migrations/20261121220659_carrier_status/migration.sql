-- CreateTable
CREATE TABLE "carrier_status" (
    "id" UUID NOT NULL,
    "status_key" TEXT NOT NULL,
    "awb" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "mapped" BOOLEAN NOT NULL,
    "reason" TEXT,
    "format" TEXT NOT NULL,
    "source_line" INTEGER,
    "source_element" TEXT,
    "source_text" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3),
    "time_basis" TEXT,
    "station" TEXT,
    "flight" TEXT,
    "flight_date" TEXT,
    "carrier_code" TEXT,
    "discrepancy" TEXT,
    "toa_timestamp" TIMESTAMPTZ(3),
    "shipment" TEXT,
    "pieces" INTEGER,
    "weight" DOUBLE PRECISION,
    "weight_unit" TEXT,
    "total_pieces" INTEGER,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "ordinal" INTEGER NOT NULL,

    CONSTRAINT "carrier_status_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "carrier_status_status_key_key" ON "carrier_status"("status_key");

-- CreateIndex
CREATE INDEX "carrier_status_awb_received_at_idx" ON "carrier_status"("awb", "received_at");

-- CreateIndex
CREATE INDEX "carrier_status_received_at_idx" ON "carrier_status"("received_at");
